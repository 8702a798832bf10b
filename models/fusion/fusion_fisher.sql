-- name: fusion_fisher
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); unique_grain; accepted_range(score, 0, )
-- description: Fisher's combination of the arms' p-values (seed 003, eq. 4 with equal alpha):
--   S = -2 sum_a ln p_a. Every arm's marginal influence stays 1 (no suppression).
SELECT corpus, query_row, doc_row, -2 * sum(ln(p)) AS score
FROM models.arm_p_values
GROUP BY corpus, query_row, doc_row
