-- name: measure_success
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Success@k (trec_eval success.k): 1 if a relevant document is among the first k, else 0.
--   Success(rel=g)@k counts grades >= g as relevant instead of the relevance level's.
SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN count(*) FILTER (WHERE {{ is_relevant() }}) > 0 THEN 1.0 ELSE 0.0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'Success'
LEFT JOIN models.judged_ranking AS j
    ON j.system = e.system AND j.query = e.query AND j.rank <= m.cutoff
GROUP BY e.study, e.system, e.query, m.measure
