-- name: reversal_totals
-- version: 1
-- stage: evaluate
-- grain: rule
-- audits: not_null(rule, dense_correct_reversed, dense_wrong_corrected, queries); unique_grain
-- description: Per rule, the pairwise reversals against the dense arm (fusion_reversals, seed 003 eq.
--   15/16) summed over the judged queries, and the number of those queries.
SELECT
    rule,
    sum(dense_correct_reversed) AS dense_correct_reversed,
    sum(dense_wrong_corrected) AS dense_wrong_corrected,
    count(*) AS queries
FROM models.fusion_reversals
GROUP BY rule
