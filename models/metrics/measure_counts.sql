-- name: measure_counts
-- version: 4
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, )
-- description: NumRet (documents retrieved), NumRel (relevant in the qrels), NumRelRet (relevant
--   retrieved) and num_nonrel_judged_ret (judged non-relevant retrieved: a grade from 0 to below the
--   relevance level): trec_eval's num_ret, num_rel, num_rel_ret and num_nonrel_judged_ret. Summed, not
--   averaged, over queries.
WITH relevant_retrieved AS (
    SELECT
        system,
        query,
        count(*) FILTER (WHERE relevant) AS num_rel_ret,
        count(*) FILTER (WHERE grade >= 0 AND NOT relevant) AS num_nonrel_judged_ret
    FROM models.judged_ranking
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
        WHEN 'NumRelRet' THEN coalesce(r.num_rel_ret, 0)
        ELSE coalesce(r.num_nonrel_judged_ret, 0)
    END AS DOUBLE) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('NumRet', 'NumRel', 'NumRelRet', 'num_nonrel_judged_ret')
LEFT JOIN models.retrieved_counts AS c ON c.system = e.system AND c.query = e.query
LEFT JOIN relevant_retrieved AS r ON r.system = e.system AND r.query = e.query
