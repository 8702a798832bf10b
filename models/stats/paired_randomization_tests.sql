-- name: paired_randomization_tests
-- version: 2
-- stage: evaluate
-- grain: study, subset, contrast, measure
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, mean, queries, replicates, extreme, p_value, plan_units); unique_grain; accepted_range(p_value, 0, 1); accepted_range(plan_excess, 0, 0)
-- parameters: permutation_plan = "", contrasts = [], contrast_measures = [], resample = "drop"
-- description: The paired randomization (sign-flip permutation) test of the difference a - b (Fisher
--   1935; for IR, Smucker, Allan and Carterette 2007), for each contrast and measure of
--   paired_differences, over each query subset: under the null hypothesis that the two systems are
--   exchangeable on every query, each difference d_i is as likely to be -d_i. Replicate r of the
--   stored, seeded plan `permutation_plan` (raw.permutation_plans) multiplies d_i by its sign s_ri and
--   sums: S*_r = sum s_ri d_i, against the observed S = sum d_i (both exact sums of the doubles, in 1e-17
--   units: the differences' units of paired_differences). Two-sided, the replicates at least as extreme
--   are those with |S*_r| >= |S|, a tie counting as at least as extreme: compared at 1e-12 per difference
--   (the statistics macro tie_margin, far above a double's rounding error), so that sums whose exact
--   values are equal tie, as they often do for discrete measures (P@k, Success@k, R@k). With R
--   replicates, p = (1 + extreme) / (1 + R): the observed assignment counts as one of the R + 1
--   (Phipson and Smyth 2010, "Permutation p-values should never be zero"; Davison and Hinkley 1997,
--   ch. 4), so p is never below 1 / (R + 1). Every replicate flips the same n differences, so comparing
--   sums compares means; mean is S / n (exact, as paired_bootstrap's). The subset rule is the parameter `resample`:
--   "drop" uses the plan's signs of the subset's queries (a subset of independent flips is itself a
--   sign-flip plan), "within" the plan `<permutation_plan>/<subset>` over the subset's own positions.
--   plan_units (the plan's signs per replicate) must equal the queries the plan covers (plan_excess 0).
{%- set columns = [] %}
{%- for a, b in contrasts %}{% for measure in contrast_measures %}
{%- set _ = columns.append((a, b, measure)) %}
{%- endfor %}{% endfor %}
{% if columns -%}
-- Each subset's queries, the plan that flips them, their position in it, how many it covers, and
-- their differences in units, one column per contrast and measure.
WITH members AS (
    {{ plan_members(permutation_plan, resample, columns) | indent(4) }}
),

observed AS (
    SELECT
        study,
        subset,
        max(plan) AS plan,
        max(plan_queries) AS covered,
        {%- for column in columns %}
        CAST(sum(d{{ loop.index }}) AS DECIMAL(38, 0)) AS s{{ loop.index }},
        count(d{{ loop.index }}) AS n{{ loop.index }},
        {{ mean('d' ~ loop.index ~ ' / 1e17') }} AS mean{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    FROM members
    GROUP BY study, subset
),

flipped_sums AS (
    SELECT
        m.study,
        m.subset,
        p.replicate,
        {%- for column in columns %}
        CAST(sum(p.sign * m.d{{ loop.index }}) AS DECIMAL(38, 0)) AS s{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    FROM models.permutation_plans AS p
    JOIN members AS m ON m.plan = p.plan AND m.item = p.item
    GROUP BY m.study, m.subset, p.replicate
),

plan_signs AS (
    SELECT plan, max(item) + 1 AS plan_units
    FROM models.permutation_plans
    WHERE plan IN (SELECT plan FROM members)
    GROUP BY plan
),

tests AS (
    {%- for a, b, measure in columns %}
    SELECT
        f.study,
        f.subset,
        {{ a | literal }} AS system_a,
        {{ b | literal }} AS system_b,
        {{ measure | literal }} AS measure,
        max(o.mean{{ loop.index }}) AS mean,
        max(o.n{{ loop.index }}) AS queries,
        count(*) AS replicates,
        sum(CASE
            WHEN abs(f.s{{ loop.index }}) >= abs(o.s{{ loop.index }}) - {{ tie_margin('o.n' ~ loop.index) }} THEN 1
            ELSE 0
        END) AS extreme
    FROM flipped_sums AS f
    JOIN observed AS o ON o.study = f.study AND o.subset = f.subset
    WHERE o.n{{ loop.index }} > 0
    GROUP BY f.study, f.subset
    {{ "UNION ALL" if not loop.last }}
    {%- endfor %}
)

SELECT
    t.study,
    t.subset,
    t.system_a,
    t.system_b,
    t.system_a || ' - ' || t.system_b AS contrast,
    t.measure,
    t.mean,
    t.queries,
    t.replicates,
    t.extreme,
    (1 + t.extreme) / (1 + CAST(t.replicates AS DOUBLE)) AS p_value,
    u.plan_units,
    u.plan_units - o.covered AS plan_excess
FROM tests AS t
JOIN observed AS o ON o.study = t.study AND o.subset = t.subset
JOIN plan_signs AS u ON u.plan = o.plan
{%- else -%}
{{ no_rows({"study": "VARCHAR", "subset": "VARCHAR", "system_a": "VARCHAR", "system_b": "VARCHAR", "contrast": "VARCHAR",
            "measure": "VARCHAR", "mean": "DOUBLE", "queries": "BIGINT", "replicates": "BIGINT", "extreme": "BIGINT",
            "p_value": "DOUBLE", "plan_units": "INTEGER", "plan_excess": "BIGINT"}) }}
{%- endif %}
