-- name: bootstrap_replicates
-- version: 1
-- stage: evaluate
-- grain: study, subset, contrast, measure, replicate
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, replicate, draws, plan, plan_units, resampled); unique_grain
-- parameters: bootstrap_plan = "", contrasts = [], contrast_measures = [], resample = "drop"
-- parity: within(mean 1e-12, units 10000000): the mean and the exact sum of up to 100 draws of
--   paired_differences' d and units, each within its tolerance (see there)
-- description: The paired bootstrap's replicates, for each contrast [a, b] of `contrasts` and each
--   measure of `contrast_measures`, over each query subset: per replicate r of the stored, seeded plan
--   (raw.resample_plans: draws of query positions with replacement), the mean d*_r of the per-query
--   differences (paired_differences) over the draws: units, their exact sum in 1e-17 units, over draws,
--   the draws with a difference (the statistics macro mean_of_units). The subset rule is the parameter
--   `resample`: "drop" resamples every judged query from the plan `bootstrap_plan` and a subset drops
--   the draws outside it; "within" resamples each subset from its own plan `<bootstrap_plan>/<subset>`,
--   drawn over its own queries. plan_units is the plan's draws per replicate, resampled the number of
--   queries the plan resamples (equal for a plan made for these queries: paired_bootstrap checks).
--   Read by paired_bootstrap (the percentile interval) and paired_bootstrap_tests (the p-value).
{%- set columns = [] %}
{%- for a, b in contrasts %}{% for measure in contrast_measures %}
{%- set _ = columns.append((a, b, measure)) %}
{%- endfor %}{% endfor %}
{% if columns -%}
-- Each subset's queries, the plan that resamples them, their position in it, how many it resamples,
-- and their differences, one column per contrast and measure.
WITH members AS (
    {{ plan_members(bootstrap_plan, resample, columns) | indent(4) }}
),

replicates AS (
    SELECT
        m.study,
        m.subset,
        p.replicate,
        {%- for column in columns %}
        {{ mean_of_units('m.d' ~ loop.index) }} AS mean{{ loop.index }},
        {{ units_sum('m.d' ~ loop.index) }} AS units{{ loop.index }},
        count(m.d{{ loop.index }}) AS draws{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    FROM models.resample_plans AS p
    JOIN members AS m ON m.plan = p.plan AND m.item = p.item
    GROUP BY m.study, m.subset, p.replicate
),

plan_draws AS (
    SELECT plan, max(draw) + 1 AS plan_units
    FROM models.resample_plans
    WHERE plan IN (SELECT plan FROM members)
    GROUP BY plan
),

plan_sizes AS (
    SELECT m.study, m.subset, max(m.plan) AS plan, max(m.plan_queries) AS resampled, max(u.plan_units) AS plan_units
    FROM members AS m
    JOIN plan_draws AS u ON u.plan = m.plan
    GROUP BY m.study, m.subset
),

replicate_means AS (
    {%- for a, b, measure in columns %}
    SELECT
        study,
        subset,
        {{ a | literal }} AS system_a,
        {{ b | literal }} AS system_b,
        {{ measure | literal }} AS measure,
        replicate,
        mean{{ loop.index }} AS mean,
        units{{ loop.index }} AS units,
        draws{{ loop.index }} AS draws
    FROM replicates
    {{ "UNION ALL" if not loop.last }}
    {%- endfor %}
)

SELECT
    r.study,
    r.subset,
    r.system_a,
    r.system_b,
    r.system_a || ' - ' || r.system_b AS contrast,
    r.measure,
    r.replicate,
    r.mean,
    r.units,
    r.draws,
    z.plan,
    z.plan_units,
    z.resampled
FROM replicate_means AS r
JOIN plan_sizes AS z ON z.study = r.study AND z.subset = r.subset
{%- else -%}
{{ no_rows({"study": "VARCHAR", "subset": "VARCHAR", "system_a": "VARCHAR", "system_b": "VARCHAR", "contrast": "VARCHAR",
            "measure": "VARCHAR", "replicate": "INTEGER", "mean": "DOUBLE", "units": "DECIMAL(38, 0)", "draws": "BIGINT",
            "plan": "VARCHAR", "plan_units": "INTEGER", "resampled": "BIGINT"}) }}
{%- endif %}
