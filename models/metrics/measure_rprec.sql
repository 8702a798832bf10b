-- name: measure_rprec
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Rprec: precision at rank R, R being the number of relevant documents of the query;
--   0 for a query without relevant documents.
SELECT
    e.run_id,
    e.qid,
    m.measure,
    CASE WHEN e.num_rel > 0 THEN count(*) FILTER (WHERE j.relevant) / e.num_rel ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'Rprec'
LEFT JOIN models.judged_ranking AS j
    ON j.run_id = e.run_id AND j.qid = e.qid AND j.rank <= e.num_rel
GROUP BY e.run_id, e.qid, e.num_rel, m.measure
