-- name: wilson_intervals
-- version: 2
-- stage: evaluate
-- grain: study, system, subset, measure
-- audits: not_null(study, system, subset, measure, value, ci_low, ci_high, queries); unique_grain; accepted_range(ci_low, 0, 1); accepted_range(ci_high, 0, 1)
-- parameters: wilson_measures = []
-- description: The Wilson score 95% interval of a hit rate (seed 004: Top-1, Hit@5), for each measure
--   the parameter `wilson_measures` names, whose per-query values are 0 or 1: the rate over its queries
--   (sql/macros/statistics.sql wilson_interval).
SELECT
    study,
    system,
    subset,
    measure,
    value,
    {{ wilson_interval("value", "queries") | indent(4) }},
    queries
FROM models.run_measures
WHERE measure IN {{ wilson_measures | literal }}
