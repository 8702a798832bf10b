{#- Means, quantiles and intervals: every aggregation of per-query values over queries or replicates. -#}

{#- The q-quantile of the values, interpolated linearly between the two nearest order statistics
    (quantile_cont, numpy's default). -#}
{% macro quantile(value, q) -%}
quantile_cont({{ value }}, {{ q }})
{%- endmacro %}

{#- The percentile interval of a bootstrap (Efron): the (1 - level) / 2 and (1 + level) / 2 quantiles of
    the replicates' values, as ci_low, ci_high. -#}
{% macro percentile_interval(value, level=0.95) -%}
{{ quantile(value, ((1 - level) / 2) | round(12)) }} AS ci_low,
{{ quantile(value, ((1 + level) / 2) | round(12)) }} AS ci_high
{%- endmacro %}

{#- The median: the 0.5-quantile, the mean of the two middle values for an even count. -#}
{% macro median(value) -%}
{{ quantile(value, 0.5) }}
{%- endmacro %}

{#- Means and sums of doubles that do not depend on the order of addition, so that they are the same on
    every thread count and query plan: each value rounded to 24 decimals and added exactly as a
    DECIMAL(38, 24) (|value| and |sum| below 1e14), the sum returned as a DOUBLE, and the mean that
    sum over the count (NULLs left out, as avg does). Across engines the last bit may differ: Spark
    casts a double to a DECIMAL from its shortest decimal form (0.935), DuckDB from its exact binary
    value (0.934999999999999997779554). -#}
{% macro mean(value) -%}
CAST(sum(CAST({{ value }} AS DECIMAL(38, 24))) AS DOUBLE) / count({{ value }})
{%- endmacro %}

{% macro exact_sum(value) -%}
CAST(sum(CAST({{ value }} AS DECIMAL(38, 24))) AS DOUBLE)
{%- endmacro %}

{#- The same, fast, for the millions of additions of a bootstrap: a value as a whole number of 1e-17
    units (a BIGINT, so |value| < 92; a larger one stops the build with a conversion error), the exact
    sum of such units as a DECIMAL(38, 0) (DuckDB sums BIGINTs into a HUGEINT, Spark into a BIGINT,
    which 93 draws of 1e17 units overflow: a bootstrap over thousands of queries), and their mean, that
    sum over the count (NULLs left out). -#}
{% macro units(value) -%}
CAST(round(({{ value }}) * 1e17) AS BIGINT)
{%- endmacro %}

{% macro units_sum(units) -%}
sum(CAST({{ units }} AS DECIMAL(38, 0)))
{%- endmacro %}

{% macro mean_of_units(units) -%}
CAST({{ units_sum(units) }} AS DOUBLE) / 1e17 / count({{ units }})
{%- endmacro %}

{#- Values compared for ties (the paired tests compare sums of differences: |S*| >= |S|): a value as a
    whole number of 1e-12 units (a BIGINT, so |value| < 9.2e6), summed exactly with units_sum. A
    measure's double is its exact value rounded, with an error up to about 2e-16 for a difference of
    two values up to 1, so in 1e-17 units equal differences become unequal numbers (0.2 - 0.1 is
    10000000000000000 of them, 0.3 - 0.2 9999999999999998). A 1e-12 unit is four thousand times that
    error: a difference that is a fraction p/q with q dividing 10^12 (P@k at k = 1, 2, 4, 5, 10, 20, 100,
    1000, Success@k, Top-1, the counts) is a whole number of them, and any other fraction is a whole
    number or at least 1/(2q) of a unit away from a rounding boundary, so equal differences with q <
    2,000 (P@k at any k below 2,000, R@k on a query with fewer than 2,000 relevant documents, RR at ranks
    whose product is below 2,000) always get equal units. Two different values closer than 1e-12 may
    get equal units: a tie counted as at least as extreme, never fewer. tie_sum sums them exactly, as
    a DECIMAL(38, 0): DuckDB sums BIGINTs into a HUGEINT, Spark into a BIGINT, exact up to 9.2e18 units
    (values adding up to 9.2 million; beyond, Spark's ANSI mode stops on the overflow), and summing
    BIGINTs is a third faster than summing DECIMALs (units_sum) over a bootstrap's millions of draws. -#}
{% macro tie_units(value) -%}
CAST(round(({{ value }}) * 1e12) AS BIGINT)
{%- endmacro %}

{% macro tie_sum(units) -%}
CAST(sum({{ units }}) AS DECIMAL(38, 0))
{%- endmacro %}
