-- name: measure_precision
-- version: 4
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: P@k (trec_eval P.k): relevant documents among the first k, divided by k even when
--   fewer than k were retrieved. P(rel=g)@k counts grades >= g as relevant instead of the
--   relevance level's (judged_ranking.relevant). P_avgjg@k is P@k against each judgment group's qrels
--   (trec_eval -R qrels_jg), which measure_avgjg averages over a topic's groups.
SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    count(*) FILTER (WHERE {{ is_relevant() }}) / m.cutoff AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('P', 'P_avgjg')
LEFT JOIN models.judged_ranking AS j
    ON j.system = e.system AND j.query = e.query AND j.rank <= m.cutoff
GROUP BY e.study, e.system, e.query, m.measure, m.cutoff
