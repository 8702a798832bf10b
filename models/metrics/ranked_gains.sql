-- name: ranked_gains
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: study, system, query, measure, rank
-- audits: not_null(study, system, query, measure, rank, gain)
-- materialized: view
-- description: The ranked documents that gain something (grade_gains; a gain may be negative where the
--   measure's parameters say so), per measure that sums gains, within its cutoff: what nDCG, G,
--   ndcg_rel and Rndcg sum over the ranking (judged_ranking's rank and grade).
SELECT j.study, j.system, j.query, m.measure, j.rank, j.grade, g.gain
FROM models.judged_ranking AS j
JOIN models.grade_gains AS g ON g.grade = j.grade
JOIN models.measure_requests AS m ON m.measure = g.measure
WHERE g.gain <> 0 AND (m.cutoff IS NULL OR j.rank <= m.cutoff)
