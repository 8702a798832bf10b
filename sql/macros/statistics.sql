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

{#- The same exact sum over a window (a running sum: `window` is the OVER clause's text). -#}
{% macro running_exact_sum(value, window) -%}
CAST(sum(CAST({{ value }} AS DECIMAL(38, 24))) OVER ({{ window }}) AS DOUBLE)
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

{#- Sums compared for ties (the paired tests: |S*| >= |S|). A measure's double is its exact value rounded,
    with an error below 2e-16 for a value up to 1 (one division), so two sums of n differences in 1e-17
    units (units_sum: exact sums of the doubles) whose exact values are equal can differ by a few units per
    difference: P@10's 0.3 - 0.2 is 9999999999999998 units, 0.2 - 0.1 10000000000000000, and R@10's
    2/3 - 1/3 - 1/3 is not 0 in any units of rounded values. So the tests compare at a resolution well
    above a double's noise: a sum within tie_margin(n), 1e-12 per difference (100000 units, some 5,000
    times the error), of the observed one counts as equal, exactly as a tie of the exact values would.
    Two exact sums that truly differ by less than that count as tied too (never fewer extreme
    replicates): the sums of P@k differ by multiples of 1/k, of Success@k by whole numbers, of R@k by
    multiples of 1 / lcm of the queries' relevant counts, each far above 1e-12 per difference there. -#}
{% macro tie_margin(differences) -%}
CAST({{ differences }} AS DECIMAL(38, 0)) * 100000
{%- endmacro %}
