-- name: evidence_contrasts
-- version: 1
-- stage: evaluate
-- grain: bundle, subset, contrast, measure
-- audits: not_null(bundle, subset, contrast, measure, diagnostic, mean, ci_low, ci_high, replicates, tasks, plan_units); unique_grain; accepted_range(plan_excess, 0, 0); at_least_one_row
-- parameters: bundle = "evidence_demo", evidence_plan = "evidence_bootstrap"
-- description: Seed 000's paired bootstrap ("statistics"): per subset, contrast (coverage - dense,
--   coverage - typed, typed - dense, and oracle - dense, marked diagnostic) and measure (coverage,
--   nDCG@5, redundancy, pair_cosine), the mean per-task difference and its percentile 95% interval
--   (2.5% and 97.5% quantiles of the replicate means). Unit: the task, paired across methods. Each
--   subset is resampled on its own: its plan `<evidence_plan>/<subset>` (rankhouse/evidence.py)
--   draws positions 0 .. n - 1 of its own n tasks in tasks.jsonl order; `plan_units` is the plan's
--   draws per replicate, which must equal `tasks` (plan_excess 0). No p-values: intervals only.
WITH measures AS (
    SELECT bundle, method, task_id, 'coverage' AS measure, coverage AS value FROM models.evidence_task_metrics
    UNION ALL
    SELECT bundle, method, task_id, 'nDCG@5', ndcg5 FROM models.evidence_task_metrics
    UNION ALL
    SELECT bundle, method, task_id, 'redundancy', redundancy FROM models.evidence_task_metrics
    UNION ALL
    SELECT bundle, method, task_id, 'pair_cosine', pair_cosine FROM models.evidence_task_metrics
),

contrasts AS (
    SELECT 'coverage' AS a, 'dense' AS b, FALSE AS diagnostic
    UNION ALL
    SELECT 'coverage', 'typed', FALSE
    UNION ALL
    SELECT 'typed', 'dense', FALSE
    UNION ALL
    SELECT 'oracle', 'dense', TRUE
),

differences AS (
    SELECT x.bundle, c.a || ' - ' || c.b AS contrast, c.diagnostic, x.measure, x.task_id, x.value - y.value AS difference
    FROM contrasts AS c
    JOIN measures AS x ON x.method = c.a
    JOIN measures AS y ON y.bundle = x.bundle AND y.method = c.b AND y.task_id = x.task_id AND y.measure = x.measure
),

members AS (
    SELECT 'all' AS subset, task_id, row_number() OVER (ORDER BY row_index) - 1 AS item
    FROM raw.evidence_tasks
    WHERE bundle = {{ bundle | literal }}
    UNION ALL
    SELECT split AS subset, task_id, row_number() OVER (PARTITION BY split ORDER BY row_index) - 1 AS item
    FROM raw.evidence_tasks
    WHERE bundle = {{ bundle | literal }}
),

sizes AS (
    SELECT subset, {{ evidence_plan | literal }} || '/' || subset AS plan, count(*) AS tasks
    FROM members
    GROUP BY subset
),

plan_units AS (
    SELECT s.plan, max(p.draw) + 1 AS units
    FROM sizes AS s
    JOIN raw.resample_plans AS p ON p.plan = s.plan
    GROUP BY s.plan
),

subset_differences AS (
    SELECT s.subset, s.plan, m.item, d.bundle, d.contrast, d.diagnostic, d.measure, d.difference
    FROM members AS m
    JOIN sizes AS s ON s.subset = m.subset
    JOIN differences AS d ON d.task_id = m.task_id
),

replicates AS (
    SELECT d.bundle, d.subset, d.contrast, d.measure, p.replicate, avg(d.difference) AS mean_difference
    FROM raw.resample_plans AS p
    JOIN subset_differences AS d ON d.plan = p.plan AND d.item = p.item
    GROUP BY d.bundle, d.subset, d.contrast, d.measure, p.replicate
),

observed AS (
    SELECT bundle, subset, contrast, diagnostic, measure, avg(difference) AS mean
    FROM subset_differences
    GROUP BY bundle, subset, contrast, diagnostic, measure
)

SELECT
    o.bundle,
    o.subset || CAST(s.tasks AS VARCHAR) AS subset,
    o.contrast,
    o.measure,
    o.diagnostic,
    o.mean,
    quantile_cont(r.mean_difference, 0.025) AS ci_low,
    quantile_cont(r.mean_difference, 0.975) AS ci_high,
    count(*) AS replicates,
    s.tasks,
    u.units AS plan_units,
    u.units - s.tasks AS plan_excess
FROM observed AS o
JOIN sizes AS s ON s.subset = o.subset
JOIN plan_units AS u ON u.plan = s.plan
JOIN replicates AS r ON r.bundle = o.bundle AND r.subset = o.subset AND r.contrast = o.contrast AND r.measure = o.measure
GROUP BY o.bundle, o.subset, s.tasks, o.contrast, o.measure, o.diagnostic, o.mean, u.units
