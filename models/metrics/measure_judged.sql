-- name: measure_judged
-- version: 2
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Judged@k (ir_measures Judged): the share of the first k retrieved documents that have a
--   judgment (any grade, as ir_measures counts every qrels line), divided by the number retrieved
--   when fewer than k were (as ir_measures does); Judged without a cutoff over every retrieved
--   document; 0 for a query with no document retrieved. unj@k (trec_eval unj.k): the share of the
--   first k ranks that hold an unjudged document (not in the judgments, or a negative grade: pooled,
--   not judged), divided by k even when fewer were retrieved (the missing ranks count as judged).
SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE
        WHEN m.family = 'unj' THEN (least(m.cutoff, coalesce(c.num_ret, 0)) - count(j.rank) FILTER (WHERE j.grade >= 0))
            / m.cutoff
        WHEN coalesce(c.num_ret, 0) > 0 THEN count(j.rank) / least(coalesce(m.cutoff, c.num_ret), c.num_ret)
        ELSE 0
    END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('Judged', 'unj')
LEFT JOIN models.retrieved_counts AS c ON c.system = e.system AND c.query = e.query
LEFT JOIN models.judged_ranking AS j
    ON j.system = e.system AND j.query = e.query AND (m.cutoff IS NULL OR j.rank <= m.cutoff)
GROUP BY e.study, e.system, e.query, m.measure, m.family, m.cutoff, c.num_ret
