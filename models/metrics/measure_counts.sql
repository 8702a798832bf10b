-- name: measure_counts
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, )
-- description: NumRet (documents retrieved), NumRel (relevant in the qrels) and NumRelRet
--   (relevant retrieved): trec_eval's num_ret, num_rel and num_rel_ret. Summed, not averaged, over
--   queries.
WITH retrieved AS (
    SELECT run_id, qid, count(*) AS num_ret, count_if(relevant) AS num_rel_ret
    FROM models.judged_ranking
    GROUP BY run_id, qid
)

SELECT
    e.run_id,
    e.qid,
    m.measure,
    CAST(CASE m.family
        WHEN 'NumRet' THEN coalesce(r.num_ret, 0)
        WHEN 'NumRel' THEN e.num_rel
        ELSE coalesce(r.num_rel_ret, 0)
    END AS DOUBLE) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('NumRet', 'NumRel', 'NumRelRet')
LEFT JOIN retrieved AS r ON r.run_id = e.run_id AND r.qid = e.qid
