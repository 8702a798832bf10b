-- name: fusion_metrics
-- version: 2
-- stage: evaluate
-- grain: rule, corpus, measure
-- audits: not_null(rule, corpus, measure, value, queries); unique_grain; accepted_range(value, 0, 1)
-- parameters: corpus = "banking77"
-- description: The fusion study's results table: every rule's and arm's mean of each measure over the
--   judged queries (run_measures).
SELECT system AS rule, {{ corpus | literal }} AS corpus, measure, value, queries
FROM models.run_measures
WHERE subset = 'all'
