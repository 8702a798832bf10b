-- name: measure_ndcg
-- version: 2
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: nDCG (trec_eval ndcg; nDCG@k is ndcg_cut.k): DCG = sum of gain / log2(rank + 1) (dcg_term)
--   divided by the DCG of the ideal ranking (ideal_ranking), both over the first k documents for
--   nDCG@k; 0 when the ideal is 0. nDCG uses trec_eval's linear gain (the grade); nDCG_exp the
--   exponential gain 2^grade - 1 that the studies use. Grades <= 0 gain nothing.
WITH gains AS (
    SELECT
        j.system,
        j.query,
        m.measure,
        {{ dcg_term("CASE WHEN m.family = 'nDCG' THEN j.grade ELSE pow(2, j.grade) - 1 END", 'j.rank') }} AS discounted
    FROM models.judged_ranking AS j
    JOIN models.measure_requests AS m
        ON m.family IN ('nDCG', 'nDCG_exp') AND (m.cutoff IS NULL OR j.rank <= m.cutoff)
    WHERE j.grade > 0
),

dcg AS (
    SELECT system, query, measure, {{ exact_sum('discounted') }} AS dcg
    FROM gains
    GROUP BY system, query, measure
),

ideal_dcg AS (
    SELECT
        i.query,
        m.measure,
        {{ exact_sum(dcg_term("CASE WHEN m.family = 'nDCG' THEN i.grade ELSE pow(2, i.grade) - 1 END", 'i.rank')) }} AS ideal
    FROM models.ideal_ranking AS i
    JOIN models.measure_requests AS m
        ON m.family IN ('nDCG', 'nDCG_exp') AND (m.cutoff IS NULL OR i.rank <= m.cutoff)
    GROUP BY i.query, m.measure
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN i.ideal > 0 THEN coalesce(d.dcg, 0) / i.ideal ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('nDCG', 'nDCG_exp')
LEFT JOIN dcg AS d ON d.system = e.system AND d.query = e.query AND d.measure = m.measure
LEFT JOIN ideal_dcg AS i ON i.query = e.query AND i.measure = m.measure
