-- name: grade_gains
-- version: 2
-- stage: evaluate
-- grain: measure, grade
-- audits: not_null(measure, grade, gain); unique_grain
-- description: The gain of each judged grade (0 and up) for each requested measure that sums gains (nDCG,
--   nDCG_exp, G, ndcg_rel, Rndcg, dcg, ideal_dcg): the grade itself (trec_eval's default gain, the linear gain), a gain
--   the measure's parameters give the grade (measure_parameters: nDCG(gains={1:3.0}), trec_eval
--   ndcg.1=3), or for nDCG_exp the exponential gain 2^grade - 1. A negative grade (pooled, not judged)
--   and an unjudged document gain nothing, as in trec_eval.
WITH requested AS (
    SELECT measure, family
    FROM models.measure_requests
    WHERE family IN ('nDCG', 'nDCG_exp', 'G', 'ndcg_rel', 'Rndcg', 'dcg', 'ideal_dcg')
),

grades AS (
    SELECT DISTINCT grade FROM models.judgments WHERE grade >= 0
)

SELECT
    m.measure,
    g.grade,
    CASE WHEN m.family = 'nDCG_exp' THEN pow(2, g.grade) - 1 ELSE coalesce(p.value, g.grade) END AS gain
FROM requested AS m
CROSS JOIN grades AS g
LEFT JOIN models.measure_parameters AS p
    ON p.measure = m.measure AND p.name = CAST(CAST(g.grade AS BIGINT) AS VARCHAR)
