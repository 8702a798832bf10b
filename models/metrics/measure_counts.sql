-- name: measure_counts
-- version: 2
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, )
-- description: NumRet (documents retrieved), NumRel (relevant in the qrels) and NumRelRet
--   (relevant retrieved): trec_eval's num_ret, num_rel and num_rel_ret. Summed, not averaged, over
--   queries.
WITH relevant_retrieved AS (
    SELECT run_id, qid, count(*) AS num_rel_ret
    FROM models.judged_ranking
    WHERE relevant
    GROUP BY run_id, qid
)

SELECT
    e.run_id,
    e.qid,
    m.measure,
    CAST(CASE m.family
        WHEN 'NumRet' THEN coalesce(c.num_ret, 0)
        WHEN 'NumRel' THEN e.num_rel
        ELSE coalesce(r.num_rel_ret, 0)
    END AS DOUBLE) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('NumRet', 'NumRel', 'NumRelRet')
LEFT JOIN models.retrieved_counts AS c ON c.run_id = e.run_id AND c.qid = e.qid
LEFT JOIN relevant_retrieved AS r ON r.run_id = e.run_id AND r.qid = e.qid
