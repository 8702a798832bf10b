-- name: measure_success
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Success@k (trec_eval success.k): 1 if a relevant document is among the first k, else 0.
SELECT
    e.run_id,
    e.qid,
    m.measure,
    CASE WHEN count(*) FILTER (WHERE j.relevant) > 0 THEN 1.0 ELSE 0.0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'Success'
LEFT JOIN models.judged_ranking AS j
    ON j.run_id = e.run_id AND j.qid = e.qid AND j.rank <= m.cutoff
GROUP BY e.run_id, e.qid, m.measure
