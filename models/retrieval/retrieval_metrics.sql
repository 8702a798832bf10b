-- name: retrieval_metrics
-- version: 2
-- stage: evaluate
-- grain: method, corpus, subset, measure
-- audits: not_null(method, corpus, subset, measure, value, queries); unique_grain; accepted_range(value, 0, 1)
-- parameters: corpus = "banking77"
-- description: The retrieval study's results table: every measure per method over all queries and
--   over the queries whose text does not occur in the documents (subset without_training_duplicates,
--   seed 004), means from run_measures, Wilson 95% intervals for the hit rates (wilson_intervals) and
--   macro-Top-1, the mean over intents of each intent's Top-1 (group_means).
WITH measured AS (
    SELECT system, subset, measure, value, queries FROM models.run_measures
    UNION ALL
    SELECT system, subset, measure, value, queries FROM models.group_means
)

SELECT
    m.system AS method,
    {{ corpus | literal }} AS corpus,
    m.subset,
    m.measure,
    m.value,
    w.ci_low,
    w.ci_high,
    m.queries
FROM measured AS m
LEFT JOIN models.wilson_intervals AS w ON w.system = m.system AND w.subset = m.subset AND w.measure = m.measure
