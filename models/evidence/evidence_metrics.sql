-- name: evidence_metrics
-- version: 2
-- stage: evaluate
-- grain: bundle, subset, method, measure
-- audits: not_null(bundle, subset, method, measure, value, tasks); unique_grain; at_least_one_row
-- parameters: bundle = "evidence_demo"
-- description: The evidence study's results table: each method's measures per subset of tasks (seed
--   000, "subsets": all, and each split; a subset is named by its split and its number of tasks, e.g.
--   all48, final36, development12), from run_measures: the mean over tasks of nDCG@5, coverage,
--   redundancy, pair_cosine (over the tasks that have a pair) and objective, and the totals of
--   gained_vs_dense and lost_vs_dense.
SELECT
    {{ bundle | literal }} AS bundle,
    subset || CAST(queries AS VARCHAR) AS subset,
    system AS method,
    measure,
    value,
    queries AS tasks
FROM models.run_measures
