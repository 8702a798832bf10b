-- name: measure_rr
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: RR (trec_eval recip_rank): 1 / rank of the first relevant document, 0 if none was
--   retrieved; RR@k counts only the first k documents. RR(rel=g) counts grades >= g as relevant
--   instead of the relevance level's.
SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    coalesce(1.0 / min(j.rank), 0) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'RR'
LEFT JOIN models.judged_ranking AS j
    ON j.system = e.system AND j.query = e.query AND {{ is_relevant() }}
    AND (m.cutoff IS NULL OR j.rank <= m.cutoff)
GROUP BY e.study, e.system, e.query, m.measure
