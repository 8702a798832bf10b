-- name: influence_summary
-- version: 1
-- stage: prepare
-- grain: arm
-- audits: not_null(arm, mean_influence, median_influence, candidates); unique_grain; accepted_range(mean_influence, 0, 1)
-- description: Each arm's influence on the mixture score (fusion_influence, seed 003 eq. 13) over all
--   candidates: its mean (exact, the mean macro) and median, and the number of candidates.
SELECT
    arm,
    {{ mean('influence') }} AS mean_influence,
    {{ median('influence') }} AS median_influence,
    count(*) AS candidates
FROM models.fusion_influence
GROUP BY arm
