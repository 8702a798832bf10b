{#- Whether a judged document counts as relevant to a measure: its grade is at least the measure's own
    lowest relevant grade where the measure names one (`rel`, as in ir_measures' P(rel=2)@10), else the
    evaluation's relevance level decides (judged_ranking's `relevant`, trec_eval's -l). Written once here
    and called by every measure model that counts relevant documents. -#}
{% macro is_relevant(judged="j", measure="m") -%}
coalesce({{ judged }}.grade >= {{ measure }}.rel, {{ judged }}.relevant)
{%- endmacro %}
