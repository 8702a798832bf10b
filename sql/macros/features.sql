{#- PROVISIONAL copy (issue 15): the E2 engineer owns this file and its final form replaces this one. -#}

{#- Weighted relevance (seed 004 E2): sum(w_i q_i d_i) / sum(w_i q_i), 0 for a zero denominator; E3's
    requirements and E4's positive query put their requirement weights r_i in place of q_i. An
    aggregate over a query's (or requirement's) features, one row per feature of one (query, document)
    pair: `weight` w_i, `query` q_i (or r_i), `document` d_i. Both sums are exact (exact_sum), so equal
    inputs give equal scores in any order of addition and exact ties stay exact. -#}
{% macro weighted_relevance(weight, query, document) -%}
CASE
    WHEN {{ exact_sum('(' ~ weight ~ ') * (' ~ query ~ ')') }} = 0 THEN 0
    ELSE {{ exact_sum('(' ~ weight ~ ') * (' ~ query ~ ') * (' ~ document ~ ')') }}
        / {{ exact_sum('(' ~ weight ~ ') * (' ~ query ~ ')') }}
END
{%- endmacro %}
