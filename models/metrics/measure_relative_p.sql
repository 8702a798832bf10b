-- name: measure_relative_p
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: relative_P@k (trec_eval relative_P.k): relevant documents among the first k divided by
--   min(k, R), R the query's relevant documents: the precision at k over the highest it can reach
--   (precision up to k = R, recall after it); 0 for a query without relevant documents.
SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN e.num_rel > 0 THEN count(*) FILTER (WHERE j.relevant) / least(m.cutoff, e.num_rel) ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'relative_P'
LEFT JOIN models.judged_ranking AS j
    ON j.system = e.system AND j.query = e.query AND j.rank <= m.cutoff
GROUP BY e.study, e.system, e.query, e.num_rel, m.measure, m.cutoff
