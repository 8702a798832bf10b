{#- Seed 004's weighted relevance over named features, written once for every weighted score: E2's
    sum(w_i q_i d_i) / sum(w_i q_i) with the query's values q_i, and E3/E4's sum(r_i w_i d_i) / sum(r_i w_i)
    with requirement weights r_i in their place; 0 for a zero denominator. w_i = ln((N + 1) / (df_i + 1))
    (feature_weights). Feature values (and requirement weights) are whole thousandths, each weight is
    taken in whole 1e-6 units, so every term and sum is an integer: the numerator, sum over i of
    round(w_i * 1e6) * q_i * d_i in 1e-12 units, stays below 2^53 (at most 94 features, feature_schema)
    and is exact in doubles in any order of addition. Equal numerators tie exactly, and since the
    denominator is the query's alone, a query ranks its documents by the numerator. -#}

{#- The query side, once per query (or requirement): the list of round(w_i * 1e6) * q_i, from a list of
    whole thousandths and a list of weights (DOUBLE), both in schema position order. Its sum is the
    denominator. -#}
{% macro weighted_terms(query_units, weights) -%}
list_transform(list_zip({{ query_units }}, {{ weights }}), lambda pair: CAST(round(pair[2] * 1e6) AS BIGINT) * pair[1])
{%- endmacro %}

{#- The numerator sum_i term_i * d_i (1e-12 units, an exact integer as a DOUBLE) of a document's list of
    whole thousandths: what a query ranks documents by. -#}
{% macro weighted_numerator(terms, document_units) -%}
list_dot_product(CAST({{ terms }} AS DOUBLE[]), CAST({{ document_units }} AS DOUBLE[]))
{%- endmacro %}

{#- The score: numerator / denominator, back in the values' scale (/ 1000), 0 for a zero denominator. One
    correctly rounded division of exact integers, so the score never orders two documents otherwise
    than their numerators do. -#}
{% macro weighted_relevance(numerator, denominator) -%}
CASE WHEN {{ denominator }} = 0 THEN 0.0 ELSE {{ numerator }} / ({{ denominator }} * 1000.0) END
{%- endmacro %}

{#- A corpus's feature lists (document_features or query_features) by row, as DOUBLE[] of whole
    thousandths (exact), the type list_dot_product reads, with the squared norm of each. -#}
{% macro feature_lists(model, row, corpus) -%}
SELECT
    {{ row }},
    CAST(feature_units AS DOUBLE[]) AS units,
    list_dot_product(CAST(feature_units AS DOUBLE[]), CAST(feature_units AS DOUBLE[])) AS norm2
FROM models.{{ model }}
WHERE corpus = {{ corpus }}
{%- endmacro %}
