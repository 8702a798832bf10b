-- name: fusion_fisher
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); unique_grain; accepted_range(score, 0, )
-- description: Fisher's combination of the arms' p-values (seed 003, eq. 4 with equal alpha):
--   S = -2 sum_a ln p_a. Every arm's marginal influence stays 1 (no suppression). Complete
--   candidates only (candidate_completeness).
SELECT p.corpus, p.query_row, p.doc_row, -2 * sum(ln(p.p)) AS score
FROM models.arm_p_values AS p
JOIN models.candidate_completeness AS c
    ON c.corpus = p.corpus AND c.query_row = p.query_row AND c.doc_row = p.doc_row
WHERE c.complete
GROUP BY p.corpus, p.query_row, p.doc_row
