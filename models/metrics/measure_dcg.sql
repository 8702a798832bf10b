-- name: measure_dcg
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain
-- description: dcg and ideal_dcg (trec_eval dcg and ideal_dcg, in none of its groups): nDCG's numerator
--   and denominator (measure_ndcg; both from the dcg_sums macro), in gains: the sum of gain / log2(rank +
--   1) over the system's ranked documents (ranked_gains), and over the ideal ranking (ideal_ranking), with
--   nDCG's gains (grade_gains: the grade, or the gains given, dcg.1=3,2=9); 0 where nothing gains.
WITH requested AS (
    SELECT measure, family
    FROM models.measure_requests
    WHERE family IN ('dcg', 'ideal_dcg')
),

{{ dcg_sums('requested') }}

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE
        WHEN m.family = 'dcg' THEN coalesce(d.dcg * coalesce(s.scale, 1), 0)
        ELSE coalesce(i.ideal * s.scale, 0)
    END AS value
FROM models.evaluated_queries AS e
CROSS JOIN requested AS m
LEFT JOIN scales AS s ON s.query = e.query AND s.measure = m.measure
LEFT JOIN dcg AS d ON d.system = e.system AND d.query = e.query AND d.measure = m.measure
LEFT JOIN ideal_dcg AS i ON i.query = e.query AND i.measure = m.measure
