-- name: paired_bootstrap
-- version: 1
-- stage: evaluate
-- grain: study, subset, contrast, measure
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, mean, ci_low, ci_high, replicates, queries, plan_units); unique_grain; accepted_range(plan_excess, 0, 0)
-- parameters: bootstrap_plan = "", contrasts = [], contrast_measures = [], resample = "drop", interval_level = 0.95
-- description: The paired bootstrap of the difference a - b of two systems, for each contrast [a, b]
--   of `contrasts` and each measure of `contrast_measures`, over each query subset: per replicate of
--   the stored, seeded plan (raw.resample_plans: draws of query positions with replacement), the mean
--   per-query difference over the draws (exact: the differences in 1e-17 units, the statistics
--   macros); the interval is the percentile interval of those means (percentile_interval, 95%). The subset rule is the parameter `resample`: "drop" resamples every
--   judged query from the plan `bootstrap_plan` and a subset drops the draws outside it; "within"
--   resamples each subset from its own plan `<bootstrap_plan>/<subset>`, drawn over its own queries.
--   Positions are 0-based in the study's query order (query_subsets.query_order). queries counts the
--   subset's queries; plan_units (the plan's draws per replicate) must equal the queries the plan
--   resamples (plan_excess 0). No p-values.
{%- set columns = [] %}
{%- for a, b in contrasts %}{% for measure in contrast_measures %}
{%- set _ = columns.append((a, b, measure)) %}
{%- endfor %}{% endfor %}
{% if columns -%}
WITH positions AS (
    SELECT
        study,
        subset,
        query,
        row_number() OVER (PARTITION BY study, subset ORDER BY query_order) - 1 AS position,
        count(*) OVER (PARTITION BY study, subset) AS queries
    FROM models.query_subsets
),

-- Each subset's queries, the plan that resamples them, their position in it and how many it resamples.
members AS (
    {%- if resample == "within" %}
    SELECT
        study, subset, query, {{ bootstrap_plan | literal }} || '/' || subset AS plan, position AS item, queries,
        queries AS resampled
    FROM positions
    {%- else %}
    SELECT
        p.study, p.subset, p.query, {{ bootstrap_plan | literal }} AS plan, a.position AS item, p.queries,
        a.queries AS resampled
    FROM positions AS p
    JOIN positions AS a ON a.study = p.study AND a.subset = 'all' AND a.query = p.query
    {%- endif %}
),

differences AS (
    SELECT
        study,
        query,
        {%- for a, b, measure in columns %}
        {{ units("max(CASE WHEN system = " ~ (a | literal) ~ " AND measure = " ~ (measure | literal) ~ " THEN value END)
            - max(CASE WHEN system = " ~ (b | literal) ~ " AND measure = " ~ (measure | literal) ~ " THEN value END)") }}
            AS d{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    FROM models.query_measures
    GROUP BY study, query
),

member_differences AS (
    SELECT m.study, m.subset, m.plan, m.item, d.*
    FROM members AS m
    JOIN differences AS d ON d.study = m.study AND d.query = m.query
),

replicates AS (
    SELECT
        d.study,
        d.subset,
        p.replicate,
        {%- for column in columns %}
        {{ mean_of_units('d.d' ~ loop.index) }} AS d{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    FROM models.resample_plans AS p
    JOIN member_differences AS d ON d.plan = p.plan AND d.item = p.item
    GROUP BY d.study, d.subset, p.replicate
),

plan_draws AS (
    SELECT plan, max(draw) + 1 AS plan_units
    FROM models.resample_plans
    WHERE plan IN (SELECT plan FROM members)
    GROUP BY plan
),

plan_sizes AS (
    SELECT m.study, m.subset, max(m.queries) AS queries, max(m.resampled) AS resampled, max(u.plan_units) AS plan_units
    FROM members AS m
    JOIN plan_draws AS u ON u.plan = m.plan
    GROUP BY m.study, m.subset
),

observed AS (
    SELECT
        study,
        subset,
        {%- for column in columns %}
        {{ mean('d' ~ loop.index ~ ' / 1e17') }} AS d{{ loop.index }}{{ "," if not loop.last }}
        {%- endfor %}
    FROM member_differences
    GROUP BY study, subset
),

intervals AS (
    {%- for a, b, measure in columns %}
    SELECT
        r.study,
        r.subset,
        {{ a | literal }} AS system_a,
        {{ b | literal }} AS system_b,
        {{ measure | literal }} AS measure,
        max(o.d{{ loop.index }}) AS mean,
        {{ percentile_interval("r.d" ~ loop.index, interval_level) | indent(8) }},
        count(*) AS replicates
    FROM replicates AS r
    JOIN observed AS o ON o.study = r.study AND o.subset = r.subset
    GROUP BY r.study, r.subset
    {{ "UNION ALL" if not loop.last }}
    {%- endfor %}
)

SELECT
    i.study,
    i.subset,
    i.system_a,
    i.system_b,
    i.system_a || ' - ' || i.system_b AS contrast,
    i.measure,
    i.mean,
    i.ci_low,
    i.ci_high,
    i.replicates,
    z.queries,
    z.plan_units,
    z.plan_units - z.resampled AS plan_excess
FROM intervals AS i
JOIN plan_sizes AS z ON z.study = i.study AND z.subset = i.subset
{%- else -%}
{{ no_rows({"study": "VARCHAR", "subset": "VARCHAR", "system_a": "VARCHAR", "system_b": "VARCHAR", "contrast": "VARCHAR",
            "measure": "VARCHAR", "mean": "DOUBLE", "ci_low": "DOUBLE", "ci_high": "DOUBLE", "replicates": "BIGINT",
            "queries": "BIGINT", "plan_units": "BIGINT", "plan_excess": "BIGINT"}) }}
{%- endif %}
