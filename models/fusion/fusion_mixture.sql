-- name: fusion_mixture
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); accepted_range(score, , )
-- parameters: kappa = 0.0, beta = 0.5
-- description: The mixture e-value (seed 003, eq. 7-11): S = log sum_a pi_a B(p_a) with
--   B(p) = (kappa + p)^-beta / Z, Z = integral_0^1 (kappa + u)^-beta du, and equal pi_a = 1 / (number of
--   arms) fixed by configuration; evaluated as the log-sum-exp of ln pi_a - beta ln(kappa + p_a) - ln Z.
--   Complete candidates only (candidate_completeness).
--   Unique by construction (grouped by its grain).
WITH normaliser AS (
    SELECT CASE
        WHEN {{ beta }} = 1 THEN ln(ln((1 + {{ kappa }}) / {{ kappa }}))
        ELSE ln((pow(1 + {{ kappa }}, 1 - {{ beta }}) - pow({{ kappa }}, 1 - {{ beta }})) / (1 - {{ beta }}))
    END AS log_z
),

terms AS (
    SELECT
        p.corpus,
        p.query_row,
        p.doc_row,
        -ln(c.arms) - {{ beta }} * ln({{ kappa }} + p.p) - n.log_z AS term
    FROM models.arm_p_values AS p
    JOIN models.candidate_completeness AS c
        ON c.corpus = p.corpus AND c.query_row = p.query_row AND c.doc_row = p.doc_row
    CROSS JOIN normaliser AS n
    WHERE c.complete
),

largest AS (
    SELECT corpus, query_row, doc_row, term, max(term) OVER (PARTITION BY corpus, query_row, doc_row) AS top
    FROM terms
)

SELECT corpus, query_row, doc_row, max(top) + ln(sum(exp(term - top))) AS score
FROM largest
GROUP BY corpus, query_row, doc_row
