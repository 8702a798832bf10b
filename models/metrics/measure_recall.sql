-- name: measure_recall
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: R@k (trec_eval recall.k): relevant documents among the first k over all relevant
--   documents of the query; 0 for a query without relevant documents. R(rel=g)@k counts grades >= g
--   as relevant, in the first k and in the judgments (relevant_counts), instead of the relevance
--   level's.
SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE
        WHEN coalesce(c.num_rel, e.num_rel) > 0
            THEN count(*) FILTER (WHERE {{ is_relevant() }}) / coalesce(c.num_rel, e.num_rel)
        ELSE 0
    END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'R'
LEFT JOIN models.relevant_counts AS c ON c.query = e.query AND c.measure = m.measure
LEFT JOIN models.judged_ranking AS j
    ON j.system = e.system AND j.query = e.query AND j.rank <= m.cutoff
GROUP BY e.study, e.system, e.query, e.num_rel, c.num_rel, m.measure
