{#- Orders that decide rankings. Each is written once here and called by every model that ranks. -#}

{#- trec_eval's order of a run's documents for a query: score descending, then docno descending (byte
    order); the file's rank column is ignored. Scores are compared as 32-bit floats, as trec_eval 9 (and
    pytrec_eval, which embeds it) stores them: scores equal in float32 tie. -#}
{% macro trec_order(score, docno) -%}
CAST({{ score }} AS FLOAT) DESC, {{ docno }} DESC
{%- endmacro %}
