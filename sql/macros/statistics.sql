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

{#- A share pooled over clusters (e.g. the rows of every query that pass a test, over all queries) with its
    interval by the clusters, the independent units, never by the rows (seed 003, assumption 6: pairs that
    share a query are not independent observations). `source` has the columns `keys`, and per cluster
    (one row each) `numerator` and `denominator` (counts); clusters with denominator 0 are left out. The
    CTE `name` has the keys, clusters (Q), numerator and denominator (their sums), ratio = numerator /
    denominator, its standard error by the linearised (cluster-robust) variance of a ratio estimator,
    sqrt(Q / (Q - 1) * sum_c (numerator_c - ratio denominator_c)^2) / denominator (NULL for one cluster),
    and the normal interval at `level` (95%: ratio -+ 1.959964 se) within [0, 1], as ci_low and ci_high.
    The squares are added exactly (exact_sum), so the interval does not depend on the order of addition. -#}
{% macro cluster_ratio(name, source, keys, level=0.95) -%}
{%- set key_list = keys | join(", ") -%}
{{ name }}_totals AS (
    SELECT {{ key_list }}, count(*) AS clusters, sum(numerator) AS numerator, sum(denominator) AS denominator
    FROM {{ source }}
    WHERE denominator > 0
    GROUP BY {{ key_list }}
),

{{ name }}_spread AS (
    SELECT
        {% for k in keys %}t.{{ k }}, {% endfor %}t.clusters,
        t.numerator,
        t.denominator,
        {{ exact_sum("(s.numerator - s.denominator * t.numerator / t.denominator) * (s.numerator - s.denominator * t.numerator / t.denominator)") }} AS squares
    FROM {{ name }}_totals AS t
    JOIN {{ source }} AS s ON {% for k in keys %}s.{{ k }} = t.{{ k }} AND {% endfor %}s.denominator > 0
    GROUP BY {% for k in keys %}t.{{ k }}, {% endfor %}t.clusters, t.numerator, t.denominator
),

{{ name }}_errors AS (
    SELECT
        *,
        numerator / denominator AS ratio,
        CASE WHEN clusters > 1 THEN sqrt(clusters / (clusters - 1) * squares) / denominator END AS standard_error
    FROM {{ name }}_spread
),

{{ name }} AS (
    SELECT
        {{ key_list }},
        clusters,
        numerator,
        denominator,
        ratio,
        standard_error,
        greatest(0.0, ratio - {{ level | two_sided_z }} * standard_error) AS ci_low,
        least(1.0, ratio + {{ level | two_sided_z }} * standard_error) AS ci_high
    FROM {{ name }}_errors
)
{%- endmacro %}

{#- The tertile edges of `value` over the rows of `source`, as the CTE `name` (one row: first_tertile,
    second_tertile): the values at positions ceil(n/3) and ceil(2n/3) of the rows sorted by `value`, then
    `key` (a total order). tertile_bin puts a value in short (up to the first edge), medium (up to the
    second) or long. A rule fixed before any outcome (the strata of seed 003, section 9). -#}
{% macro tertile_edges(name, source, value, key) -%}
{{ name }}_order AS (
    SELECT {{ value }} AS value, row_number() OVER (ORDER BY {{ value }}, {{ key }}) AS position, count(*) OVER () AS n
    FROM {{ source }}
),

{{ name }} AS (
    SELECT
        max(CASE WHEN position = CAST(ceil(n / 3.0) AS BIGINT) THEN value END) AS first_tertile,
        max(CASE WHEN position = CAST(ceil(2 * n / 3.0) AS BIGINT) THEN value END) AS second_tertile
    FROM {{ name }}_order
)
{%- endmacro %}

{% macro tertile_bin(value, edges) -%}
CASE
        WHEN {{ value }} <= {{ edges }}.first_tertile THEN 'short'
        WHEN {{ value }} <= {{ edges }}.second_tertile THEN 'medium'
        ELSE 'long'
    END
{%- endmacro %}

{#- The Wilson score interval of a rate `p` (the share of n = `n` units scoring 1) at `level`, as the two
    columns ci_low and ci_high: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z the two-sided
    normal quantile of `level` (1.959964 at 95%), bounded to [0, 1] (at p = 0 or 1 the rounding of the
    two terms can leave a bound a few 1e-17 outside). -#}
{% macro wilson_interval(p, n, level=0.95) -%}
{%- set z = level | two_sided_z -%}
greatest(0.0, ({{ p }} + {{ z }} * {{ z }} / (2 * {{ n }})
 - {{ z }} * sqrt({{ p }} * (1 - {{ p }}) / {{ n }} + {{ z }} * {{ z }} / (4 * {{ n }} * {{ n }})))
/ (1 + {{ z }} * {{ z }} / {{ n }})) AS ci_low,
least(1.0, ({{ p }} + {{ z }} * {{ z }} / (2 * {{ n }})
 + {{ z }} * sqrt({{ p }} * (1 - {{ p }}) / {{ n }} + {{ z }} * {{ z }} / (4 * {{ n }} * {{ n }})))
/ (1 + {{ z }} * {{ z }} / {{ n }})) AS ci_high
{%- endmacro %}
