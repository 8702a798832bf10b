-- name: measure_queries
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 1, 1)
-- description: NumQ (trec_eval num_q): 1 for every evaluated query, summed over queries.
SELECT e.study, e.system, e.query, m.measure, CAST(1 AS DOUBLE) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'NumQ'
