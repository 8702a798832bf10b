-- name: measure_ndcg
-- version: 5
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, , 1)
-- description: nDCG (trec_eval ndcg; nDCG@k is ndcg_cut.k): DCG = sum of gain / log2(rank + 1) (dcg_term)
--   over the ranking (ranked_gains) divided by the same over the ideal ranking (ideal_ranking), both
--   over the first k documents for nDCG@k; 0 when the ideal is 0. The gain (grade_gains) is
--   trec_eval's linear gain, the grade; the gains given (nDCG(gains={1:3.0,2:9.0}), trec_eval
--   ndcg.1=3,2=9, a grade not named keeping its own); or for nDCG_exp the exponential gain 2^grade - 1
--   that the studies use (ir_measures' nDCG(dcg=exp-log2), computed as gdeval and ranx compute it, for
--   any grade up to 1023, whose gain is a finite double). Grades <= 0 gain nothing by default. A
--   query's gains are divided by 2^s, s = floor(log2(its highest gain)) - 30 where that is above 0 (a
--   grade above 30 with the exponential gain, 2^31 with the linear), so that its DCG and ideal stay
--   within the exact sums' range (below 1e14): both scaled alike, their ratio does not change, and a
--   power of two rounds nothing; s = 0 (no scaling) for every gain up to 2^31.
WITH requested AS (
    SELECT measure
    FROM models.measure_requests
    WHERE family IN ('nDCG', 'nDCG_exp')
),

{{ dcg_sums('requested') }}

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
