{#- The discounted gain of a document at a rank: gain / log2(rank + 1) (Jarvelin and Kekalainen; trec_eval's
    ndcg). The one place a DCG discount is written: measure_ndcg and the evidence oracle's subset DCG
    call it. -#}
{% macro dcg_term(gain, rank) -%}
({{ gain }}) / log2({{ rank }} + 1)
{%- endmacro %}
