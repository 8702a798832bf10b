-- name: fusion_fisher
-- version: 3
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); accepted_range(score, 0, )
-- description: Fisher's combination of the arms' p-values (seed 003, eq. 4 with equal alpha):
--   S = -2 sum_a ln p_a = -2 ln prod_a p_a. Every arm's marginal influence stays 1 (no suppression).
--   The product is taken of the p-values' exact integer numerators (1 + #{reference >= s}) and
--   denominators (m + 1), so that mathematically equal products give equal scores and the tie order
--   decides (a sum of logs would not: ln(1/1001) + ln(18/1001) and ln(3/1001) + ln(6/1001) differ in the
--   last bit). Exact while the products stay below 2^53 (five arms of 1,000 reference scores). Complete
--   candidates only (candidate_completeness).
--   Unique by construction (grouped by its grain).
SELECT
    p.corpus,
    p.query_row,
    p.doc_row,
    -2 * ln(product(p.exceedances) / product(p.reference_size + 1)) AS score
FROM models.arm_p_values AS p
JOIN models.candidate_completeness AS c
    ON c.corpus = p.corpus AND c.query_row = p.query_row AND c.doc_row = p.doc_row
WHERE c.complete
GROUP BY p.corpus, p.query_row, p.doc_row
