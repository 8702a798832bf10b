{#- Seed 003's formulas that several fusion models use, each written once. -#}

{#- Eq. 1's inclusive exceedance p-value of each `tested` score against the `reference` scores of the same
    `partition` (a list of columns, e.g. arm, corpus, query_row): exceedances = 1 + #{reference >= s}, an
    exact integer, reference_size = m, p = exceedances / (m + 1), never below 1/(m + 1). Reference scores
    sort before tested ones on equal values, so that >= counts the ties and equal scores get equal p.
    Both relations have the partition's columns and `score`; the tested one also the `carried` columns
    (a list of (name, type) pairs), which the result keeps. `reference_sizes`, when given, is a relation of
    the partition's columns and reference_size (m counted by a GROUP BY, which spares a second window over
    millions of rows); else m is counted by a window. `prefix` names its CTEs (<prefix>pooled,
    <prefix>counted), so that one model can hold it several times (Spark refuses duplicate CTE names,
    even nested). A whole query (WITH ... SELECT). -#}
{% macro exceedance_p_values(reference, tested, partition, carried, reference_sizes=none, prefix="") -%}
{%- set keys = partition | join(", ") -%}
{%- set names = carried | map(attribute=0) | join(", ") -%}
{%- set counted = prefix ~ "counted" -%}
{%- set c = counted ~ "." if reference_sizes else "" -%}
WITH {{ prefix }}pooled AS (
    SELECT {{ keys }}, score, 1 AS is_reference, {% for name, type in carried %}CAST(NULL AS {{ type }}) AS {{ name }}{{ ", " if not loop.last }}{% endfor %}
    FROM {{ reference }}
    UNION ALL
    SELECT {{ keys }}, score, 0 AS is_reference, {{ names }}
    FROM {{ tested }}
),

{{ counted }} AS (
    SELECT
        {{ keys }},
        {{ names }},
        score,
        is_reference,
        sum(is_reference) OVER (
            PARTITION BY {{ keys }}
            ORDER BY score DESC, is_reference DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS references_at_or_above
        {%- if not reference_sizes %},
        sum(is_reference) OVER (PARTITION BY {{ keys }}) AS reference_size
        {%- endif %}
    FROM {{ prefix }}pooled
)

SELECT
    {% for key in partition %}{{ c }}{{ key }}{{ ", " if not loop.last }}{% endfor %},
    {% for name, type in carried %}{{ c }}{{ name }}{{ ", " if not loop.last }}{% endfor %},
    {{ c }}score,
    1 + {{ c }}references_at_or_above AS exceedances,
    (1 + {{ c }}references_at_or_above) / (reference_size + 1) AS p,
    reference_size
FROM {{ counted }}
{%- if reference_sizes %}
JOIN {{ reference_sizes }} AS sizes ON {% for key in partition %}sizes.{{ key }} = {{ counted }}.{{ key }}{{ " AND " if not loop.last }}{% endfor %}
{%- endif %}
WHERE {{ c }}is_reference = 0
{%- endmacro %}

{#- ln Z of the mixture's B (eq. 7): Z = integral_0^1 (kappa + u)^-beta du, ((1 + kappa)^(1 - beta) -
    kappa^(1 - beta)) / (1 - beta), and ln((1 + kappa) / kappa) at beta = 1. -#}
{% macro mixture_log_z(kappa, beta) -%}
CASE
        WHEN {{ beta }} = 1 THEN ln(ln((1 + {{ kappa }}) / {{ kappa }}))
        ELSE ln((pow(1 + {{ kappa }}, 1 - {{ beta }}) - pow({{ kappa }}, 1 - {{ beta }})) / (1 - {{ beta }}))
    END
{%- endmacro %}

{#- Section 8's total order of a fused ranking: the score descending, then the dense arm's score
    descending (a missing dense score after every present one: the fixed sentinel), then the row-type
    code, then the row id. -#}
{% macro fusion_order(score, dense_score, row_type, doc_row) -%}
{{ score }} DESC, {{ dense_score }} DESC NULLS LAST, {{ row_type }}, {{ doc_row }}
{%- endmacro %}

{#- The mixture e-value's score (eq. 7-11) of every row of `source`, which has the columns `keys`, `p` (one
    arm's p-value; one row per arm) and `arms` (the number of arms fixed by configuration): S = log sum_a
    pi_a B(p_a), pi_a = 1 / arms, B(p) = (kappa + p)^-beta / Z, evaluated as the log-sum-exp of the terms
    ln pi_a - beta ln(kappa + p_a) - ln Z (section 8: stable arithmetic). CTEs `name`_terms, `name`_largest
    and `name` (the keys and score). -#}
{% macro mixture_scores(name, source, keys, kappa, beta) -%}
{%- set key_list = keys | join(", ") -%}
{{ name }}_terms AS (
    SELECT {{ key_list }}, -ln(arms) - {{ beta }} * ln({{ kappa }} + p) - ({{ mixture_log_z(kappa, beta) }}) AS term
    FROM {{ source }}
),

{{ name }}_largest AS (
    SELECT {{ key_list }}, term, max(term) OVER (PARTITION BY {{ key_list }}) AS top
    FROM {{ name }}_terms
),

{{ name }} AS (
    SELECT {{ key_list }}, max(top) + ln(sum(exp(term - top))) AS score
    FROM {{ name }}_largest
    GROUP BY {{ key_list }}
)
{%- endmacro %}

{#- Stouffer's (eq. 5) upper-tail argument of an arm's p-value at its mid-value: 1 - (p - 1/(2(m + 1))), so
    that the top of the reference (p = 1) keeps a finite normal quantile. -#}
{% macro mid_p_upper(p, reference_size) -%}
1 - ({{ p }} - 1 / (2 * ({{ reference_size }} + 1)))
{%- endmacro %}
