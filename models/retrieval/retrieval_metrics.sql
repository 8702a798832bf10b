-- name: retrieval_metrics
-- version: 3
-- stage: evaluate
-- grain: method, corpus, subset, measure
-- audits: not_null(method, corpus, subset, measure, value, queries); unique_grain; accepted_range(value, 0, 1)
-- parameters: corpus = "banking77", study = "eval"
-- description: The retrieval study's results table: every measure per method over all queries and
--   over the queries whose text does not occur in the documents (subset without_training_duplicates,
--   seed 004), means from run_measures, Wilson 95% intervals for the hit rates (wilson_intervals) and
--   macro-Top-1, the mean over intents of each intent's Top-1 (group_means). The study's own rankings
--   only: a part of the study (a `model@part` ranking source, e.g. E3's and E4's in the feature study)
--   has its own queries and results.
WITH measured AS (
    SELECT study, system, subset, measure, value, queries FROM models.run_measures
    UNION ALL
    SELECT study, system, subset, measure, value, queries FROM models.group_means
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
LEFT JOIN models.wilson_intervals AS w
    ON w.study = m.study AND w.system = m.system AND w.subset = m.subset AND w.measure = m.measure
WHERE m.study = {{ study | literal }}
