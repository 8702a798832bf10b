-- name: wilson_intervals
-- version: 2
-- stage: evaluate
-- grain: study, system, subset, measure
-- audits: not_null(study, system, subset, measure, value, ci_low, ci_high, queries); unique_grain; accepted_range(ci_low, 0, 1); accepted_range(ci_high, 0, 1)
-- parameters: wilson_measures = []
-- description: The Wilson score 95% interval of a hit rate (seed 004: Top-1, Hit@5), for each measure
--   the parameter `wilson_measures` names, whose per-query values are 0 or 1: for a rate p over n
--   queries, (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = 1.959964; bounded to [0, 1]
--   (at p = 0 or 1 the rounding of the two terms can leave a bound a few 1e-17 outside).
SELECT
    study,
    system,
    subset,
    measure,
    value,
    greatest(0.0, (value + 1.959964 * 1.959964 / (2 * queries)
     - 1.959964 * sqrt(value * (1 - value) / queries + 1.959964 * 1.959964 / (4 * queries * queries)))
    / (1 + 1.959964 * 1.959964 / queries)) AS ci_low,
    least(1.0, (value + 1.959964 * 1.959964 / (2 * queries)
     + 1.959964 * sqrt(value * (1 - value) / queries + 1.959964 * 1.959964 / (4 * queries * queries)))
    / (1 + 1.959964 * 1.959964 / queries)) AS ci_high,
    queries
FROM models.run_measures
WHERE measure IN {{ wilson_measures | literal }}
