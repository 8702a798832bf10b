-- name: measure_ndcg
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: nDCG (trec_eval ndcg; nDCG@k is ndcg_cut.k): DCG = sum of gain / log2(rank + 1)
--   divided by the DCG of the ideal ranking (ideal_ranking), both over the first k documents for
--   nDCG@k; 0 when the ideal is 0. nDCG uses trec_eval's linear gain (the grade); nDCG_exp the
--   exponential gain 2^grade - 1 that the studies use. Grades <= 0 gain nothing.
WITH gains AS (
    SELECT
        j.run_id,
        j.qid,
        m.measure,
        CASE WHEN m.family = 'nDCG' THEN j.rel ELSE pow(2, j.rel) - 1 END / log2(j.rank + 1) AS discounted
    FROM models.judged_ranking AS j
    JOIN models.measure_requests AS m
        ON m.family IN ('nDCG', 'nDCG_exp') AND (m.cutoff IS NULL OR j.rank <= m.cutoff)
    WHERE j.rel > 0
),

dcg AS (
    SELECT run_id, qid, measure, sum(discounted) AS dcg
    FROM gains
    GROUP BY run_id, qid, measure
),

ideal_dcg AS (
    SELECT
        i.qid,
        m.measure,
        sum(CASE WHEN m.family = 'nDCG' THEN i.rel ELSE pow(2, i.rel) - 1 END / log2(i.rank + 1)) AS ideal
    FROM models.ideal_ranking AS i
    JOIN models.measure_requests AS m
        ON m.family IN ('nDCG', 'nDCG_exp') AND (m.cutoff IS NULL OR i.rank <= m.cutoff)
    GROUP BY i.qid, m.measure
)

SELECT
    e.run_id,
    e.qid,
    m.measure,
    CASE WHEN i.ideal > 0 THEN coalesce(d.dcg, 0) / i.ideal ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('nDCG', 'nDCG_exp')
LEFT JOIN dcg AS d ON d.run_id = e.run_id AND d.qid = e.qid AND d.measure = m.measure
LEFT JOIN ideal_dcg AS i ON i.qid = e.qid AND i.measure = m.measure
