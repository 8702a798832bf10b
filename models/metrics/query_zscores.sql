-- name: query_zscores
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, aggregate); unique_grain
-- description: Every per-query value of query_measures as a z-score (trec_eval -Z): (value - mean) / stddev,
--   the mean and standard deviation being those the z-score file (zscores) gives the query and the
--   measure (zscores); where the deviation is 0, 0 for a value equal to the mean. Where the file has no such query or
--   measure, or the deviation is 0 and the value is another, the z-score is -1000000, trec_eval's mark of a
--   missing one (MISSING_ZSCORE_VALUE). NumQ stays 1 per query (trec_eval counts the queries). run_measures
--   averages these instead of the values with the parameter `zscores`.
SELECT
    q.study,
    q.system,
    q.query,
    q.measure,
    CASE
        WHEN m.family = 'NumQ' THEN q.value
        WHEN z.stddev <> 0 THEN (q.value - z.mean) / z.stddev
        WHEN q.value = z.mean THEN 0
        ELSE -1000000
    END AS value,
    q.aggregate
FROM models.query_measures AS q
JOIN models.measure_requests AS m ON m.measure = q.measure
LEFT JOIN models.zscores AS z ON z.qid = q.query AND z.canonical = m.canonical
