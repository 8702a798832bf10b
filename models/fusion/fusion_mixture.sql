-- name: fusion_mixture
-- version: 3
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); accepted_range(score, , )
-- parameters: kappa = 0.0, beta = 0.5
-- description: The mixture e-value (seed 003, eq. 7-11): S = log sum_a pi_a B(p_a) with
--   B(p) = (kappa + p)^-beta / Z, Z = integral_0^1 (kappa + u)^-beta du, and equal pi_a = 1 / (number of
--   arms) fixed by configuration; evaluated as the log-sum-exp of ln pi_a - beta ln(kappa + p_a) - ln Z
--   (sql/macros/fusion.sql mixture_scores). Complete candidates only (candidate_completeness).
--   Unique by construction (grouped by its grain).
WITH complete AS (
    SELECT p.corpus, p.query_row, p.doc_row, p.p, c.arms
    FROM models.arm_p_values AS p
    JOIN models.candidate_completeness AS c
        ON c.corpus = p.corpus AND c.query_row = p.query_row AND c.doc_row = p.doc_row
    WHERE c.complete
),

{{ mixture_scores('mixture', 'complete', ['corpus', 'query_row', 'doc_row'], kappa, beta) }}

SELECT corpus, query_row, doc_row, score
FROM mixture
