-- name: measure_precision
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: P@k (trec_eval P.k): relevant documents among the first k, divided by k even when
--   fewer than k were retrieved.
SELECT
    e.run_id,
    e.qid,
    m.measure,
    count(*) FILTER (WHERE j.relevant) / m.cutoff AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'P'
LEFT JOIN models.judged_ranking AS j
    ON j.run_id = e.run_id AND j.qid = e.qid AND j.rank <= m.cutoff
GROUP BY e.run_id, e.qid, m.measure, m.cutoff
