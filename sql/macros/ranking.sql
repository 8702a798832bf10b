{#- Orders that decide rankings. Each is written once here and called by every model that ranks. -#}

{#- trec_eval's order of a run's documents for a query: score descending, then docno descending (byte
    order); the file's rank column is ignored. `precision` says how scores compare: "double" (the
    default) as trec_eval 10.0 stores them (a double since 2023; ir_measures and ranx also keep full
    precision), or "float" as 32-bit floats, as trec_eval 9 and pytrec_eval (which embeds it) store them:
    scores equal in float32 then tie and the docno decides. -#}
{% macro trec_order(score, docno, precision="double") -%}
{{ require(precision in ["double", "float"], 'score_precision is "double" (trec_eval 10) or "float" (trec_eval 9 and pytrec_eval)') -}}
CAST({{ score }} AS {% if precision == "float" %}FLOAT{% else %}DOUBLE{% endif %}) DESC, {{ docno }} DESC
{%- endmacro %}

{#- trec_eval's order of a run's documents when it counts preferences (form_prefs_counts.c): score
    descending, then docno ascending, the other way round from trec_order's ties. `precision` as in
    trec_order. -#}
{% macro trec_prefs_order(score, docno, precision="double") -%}
{{ require(precision in ["double", "float"], 'score_precision is "double" (trec_eval 10) or "float" (trec_eval 9 and pytrec_eval)') -}}
CAST({{ score }} AS {% if precision == "float" %}FLOAT{% else %}DOUBLE{% endif %}) DESC, {{ docno }}
{%- endmacro %}
