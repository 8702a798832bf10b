-- name: measure_rprec
-- version: 2
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Rprec: precision at rank R, R being the number of relevant documents of the query;
--   0 for a query without relevant documents.
SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN e.num_rel > 0 THEN count(*) FILTER (WHERE j.relevant) / e.num_rel ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'Rprec'
LEFT JOIN models.judged_ranking AS j
    ON j.system = e.system AND j.query = e.query AND j.rank <= e.num_rel
GROUP BY e.study, e.system, e.query, e.num_rel, m.measure
