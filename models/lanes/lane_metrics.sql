-- name: lane_metrics
-- version: 2
-- stage: evaluate
-- grain: method, corpus, measure
-- audits: not_null(method, corpus, measure, value, queries); unique_grain; accepted_range(value, 0, 1)
-- parameters: corpus = "banking77"
-- description: The lanes study's results table: each ordering's mean of each measure over the judged
--   topics (run_measures).
SELECT system AS method, {{ corpus | literal }} AS corpus, measure, value, queries
FROM models.run_measures
WHERE subset = 'all'
