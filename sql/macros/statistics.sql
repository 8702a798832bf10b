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
    every engine, thread count and query plan: each value rounded to 24 decimals and added exactly as a
    DECIMAL(38, 24) (|value| and |sum| below 1e14), the sum returned as a DOUBLE, and the mean that
    sum over the count (NULLs left out, as avg does). -#}
{% macro mean(value) -%}
CAST(sum(CAST({{ value }} AS DECIMAL(38, 24))) AS DOUBLE) / count({{ value }})
{%- endmacro %}

{% macro exact_sum(value) -%}
CAST(sum(CAST({{ value }} AS DECIMAL(38, 24))) AS DOUBLE)
{%- endmacro %}

{#- The same, fast, for the millions of additions of a bootstrap: a value as a whole number of 1e-17
    units (a BIGINT, so |value| < 92; a larger one stops the build with a conversion error), and the
    mean of such units, an exact integer sum over the count (NULLs left out). -#}
{% macro units(value) -%}
CAST(round(({{ value }}) * 1e17) AS BIGINT)
{%- endmacro %}

{% macro mean_of_units(units) -%}
sum({{ units }}) / 1e17 / count({{ units }})
{%- endmacro %}
