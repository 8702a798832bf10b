{#- How the stored, seeded plans (resample_plans, permutation_plans) index a study's queries. -#}

{#- Each subset's queries in paired_differences, one row per (study, subset, query): the plan that
    resamples or flips them, their item (position) in it, plan_queries (how many queries that plan is
    drawn over) and one column d<i> per (contrast, measure) of `columns`, the difference in 1e-17
    units. The subset rule `resample`: "drop" uses the plan `plan` over all the study's judged queries
    (study_position), so a subset keeps the plan's draws of its own queries; "within" uses the plan
    `<plan>/<subset>`, drawn over the subset's own queries (subset_position). -#}
{% macro plan_members(plan, resample, columns) -%}
SELECT
    study,
    subset,
    query,
    {%- if resample == "within" %}
    {{ plan | literal }} || '/' || subset AS plan,
    subset_position AS item,
    subset_queries AS plan_queries,
    {%- else %}
    {{ plan | literal }} AS plan,
    study_position AS item,
    study_queries AS plan_queries,
    {%- endif %}
    {%- for a, b, measure in columns %}
    max(CASE WHEN system_a = {{ a | literal }} AND system_b = {{ b | literal }} AND measure = {{ measure | literal }}
        THEN units END) AS d{{ loop.index }}
    {{- "," if not loop.last }}
    {%- endfor %}
FROM models.paired_differences
GROUP BY study, subset, query, study_position, subset_position, study_queries, subset_queries
{%- endmacro %}
