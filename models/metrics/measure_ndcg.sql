-- name: measure_ndcg
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: nDCG (trec_eval ndcg; nDCG@k is ndcg_cut.k): DCG = sum of gain / log2(rank + 1) (dcg_term)
--   divided by the DCG of the ideal ranking (ideal_ranking), both over the first k documents for
--   nDCG@k; 0 when the ideal is 0. nDCG uses trec_eval's linear gain (the grade); nDCG_exp the
--   exponential gain 2^grade - 1 that the studies use (ir_measures' nDCG(dcg=exp-log2), computed as
--   gdeval and ranx compute it, for any grade up to 1023, whose gain is a finite double). Grades <= 0
--   gain nothing. A query's gains are divided by 2^s, s = floor(log2(its highest gain)) - 30 where
--   that is above 0 (a grade above 30 with the exponential gain, 2^31 with the linear), so that its
--   DCG and ideal stay within the exact sums' range (below 1e14): both scaled alike, their ratio does not
--   change, and a power of two rounds nothing; s = 0 (no scaling) for every grade up to 30.
WITH requested AS (
    SELECT measure, family, cutoff
    FROM models.measure_requests
    WHERE family IN ('nDCG', 'nDCG_exp')
),

-- each query's scale: its highest gain is its ideal ranking's first
scales AS (
    SELECT
        i.query,
        m.measure,
        pow(2, greatest(0, floor(log2(max(
            CASE WHEN m.family = 'nDCG' THEN i.grade ELSE pow(2, i.grade) - 1 END
        ))) - 30)) AS scale
    FROM models.ideal_ranking AS i
    CROSS JOIN requested AS m
    WHERE i.rank = 1
    GROUP BY i.query, m.measure
),

gains AS (
    SELECT
        j.system,
        j.query,
        m.measure,
        {{ dcg_term("(CASE WHEN m.family = 'nDCG' THEN j.grade ELSE pow(2, j.grade) - 1 END) / s.scale", 'j.rank') }}
            AS discounted
    FROM models.judged_ranking AS j
    JOIN requested AS m ON m.cutoff IS NULL OR j.rank <= m.cutoff
    JOIN scales AS s ON s.query = j.query AND s.measure = m.measure
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
        {{ exact_sum(dcg_term("(CASE WHEN m.family = 'nDCG' THEN i.grade ELSE pow(2, i.grade) - 1 END) / s.scale",
                              'i.rank')) }} AS ideal
    FROM models.ideal_ranking AS i
    JOIN requested AS m ON m.cutoff IS NULL OR i.rank <= m.cutoff
    JOIN scales AS s ON s.query = i.query AND s.measure = m.measure
    GROUP BY i.query, m.measure
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN i.ideal > 0 THEN coalesce(d.dcg, 0) / i.ideal ELSE 0 END AS value
FROM models.evaluated_queries AS e
CROSS JOIN requested AS m
LEFT JOIN dcg AS d ON d.system = e.system AND d.query = e.query AND d.measure = m.measure
LEFT JOIN ideal_dcg AS i ON i.query = e.query AND i.measure = m.measure
