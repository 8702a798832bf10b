-- name: measure_counts
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, )
-- description: NumRet (documents retrieved), NumRel (relevant in the qrels) and NumRelRet
--   (relevant retrieved): trec_eval's num_ret, num_rel and num_rel_ret. Summed, not averaged, over
--   queries.
WITH relevant_retrieved AS (
    SELECT system, query, count(*) AS num_rel_ret
    FROM models.judged_ranking
    WHERE relevant
    GROUP BY system, query
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CAST(CASE m.family
        WHEN 'NumRet' THEN coalesce(c.num_ret, 0)
        WHEN 'NumRel' THEN e.num_rel
        ELSE coalesce(r.num_rel_ret, 0)
    END AS DOUBLE) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('NumRet', 'NumRel', 'NumRelRet')
LEFT JOIN models.retrieved_counts AS c ON c.system = e.system AND c.query = e.query
LEFT JOIN relevant_retrieved AS r ON r.system = e.system AND r.query = e.query
