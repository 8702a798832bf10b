-- name: paired_bootstrap
-- version: 2
-- stage: evaluate
-- grain: study, subset, contrast, measure
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, mean, ci_low, ci_high, replicates, queries, plan_units); unique_grain; accepted_range(plan_excess, 0, 0)
-- parameters: interval_level = 0.95
-- description: The paired bootstrap of the difference a - b of two systems, for each contrast [a, b]
--   of `contrasts` and each measure of `contrast_measures`, over each query subset: mean is the mean
--   per-query difference (paired_differences, exact: the differences in 1e-17 units, the statistics
--   macros); the interval is the percentile interval (percentile_interval, `interval_level`, 95%) of
--   the replicate means of the stored, seeded plan `bootstrap_plan` (bootstrap_replicates, which
--   applies the subset rule `resample`, "drop" or "within"). queries counts the subset's queries;
--   plan_units (the plan's draws per replicate) must equal the queries the plan resamples (plan_excess
--   0). The p-value of the bootstrap test is paired_bootstrap_tests.
WITH observed AS (
    SELECT
        study,
        subset,
        contrast,
        measure,
        {{ mean('units / 1e17') }} AS mean,
        max(subset_queries) AS queries
    FROM models.paired_differences
    GROUP BY study, subset, contrast, measure
),

intervals AS (
    SELECT
        study,
        subset,
        system_a,
        system_b,
        contrast,
        measure,
        {{ percentile_interval("mean", interval_level) | indent(8) }},
        count(*) AS replicates,
        max(plan_units) AS plan_units,
        max(resampled) AS resampled
    FROM models.bootstrap_replicates
    GROUP BY study, subset, system_a, system_b, contrast, measure
)

SELECT
    i.study,
    i.subset,
    i.system_a,
    i.system_b,
    i.contrast,
    i.measure,
    o.mean,
    i.ci_low,
    i.ci_high,
    i.replicates,
    o.queries,
    i.plan_units,
    i.plan_units - i.resampled AS plan_excess
FROM intervals AS i
JOIN observed AS o ON o.study = i.study AND o.subset = i.subset AND o.contrast = i.contrast AND o.measure = i.measure
