-- name: fusion_stouffer
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); accepted_range(score, , )
-- parameters: stouffer_bm25_weight = 1.0, stouffer_dense_weight = 1.0
-- description: Weighted Stouffer (seed 003, eq. 5): S = sum_a w_a z_a / sqrt(sum_a w_a^2), z_a the
--   normal quantile of 1 - p_a. p_a is taken at its mid-value p_a - 1/(2(m+1)), so that the top of the
--   reference (p = 1) keeps a finite z. The quantile is Acklam's rational approximation (relative
--   error below 1.2e-9). Complete candidates only (candidate_completeness).
--   Unique by construction (grouped by its grain).
WITH weighted AS (
    SELECT
        p.corpus,
        p.query_row,
        p.doc_row,
        CASE p.arm WHEN 'bm25' THEN {{ stouffer_bm25_weight }} ELSE {{ stouffer_dense_weight }} END AS weight,
        1 - (p.p - 1 / (2 * (p.reference_size + 1))) AS u
    FROM models.arm_p_values AS p
    JOIN models.candidate_completeness AS c
        ON c.corpus = p.corpus AND c.query_row = p.query_row AND c.doc_row = p.doc_row
    WHERE c.complete
),

quantiles AS (
    SELECT
        corpus,
        query_row,
        doc_row,
        weight,
        CASE
            WHEN u < 0.02425 THEN
                (((((-7.784894002430293e-03 * sqrt(-2 * ln(u)) - 3.223964580411365e-01) * sqrt(-2 * ln(u))
                    - 2.400758277161838e+00) * sqrt(-2 * ln(u)) - 2.549732539343734e+00) * sqrt(-2 * ln(u))
                    + 4.374664141464968e+00) * sqrt(-2 * ln(u)) + 2.938163982698783e+00)
                / ((((7.784695709041462e-03 * sqrt(-2 * ln(u)) + 3.224671290700398e-01) * sqrt(-2 * ln(u))
                    + 2.445134137142996e+00) * sqrt(-2 * ln(u)) + 3.754408661907416e+00) * sqrt(-2 * ln(u)) + 1)
            WHEN u <= 1 - 0.02425 THEN
                (((((-3.969683028665376e+01 * (u - 0.5) * (u - 0.5) + 2.209460984245205e+02) * (u - 0.5) * (u - 0.5)
                    - 2.759285104469687e+02) * (u - 0.5) * (u - 0.5) + 1.383577518672690e+02) * (u - 0.5) * (u - 0.5)
                    - 3.066479806614716e+01) * (u - 0.5) * (u - 0.5) + 2.506628277459239e+00) * (u - 0.5)
                / (((((-5.447609879822406e+01 * (u - 0.5) * (u - 0.5) + 1.615858368580409e+02) * (u - 0.5) * (u - 0.5)
                    - 1.556989798598866e+02) * (u - 0.5) * (u - 0.5) + 6.680131188771972e+01) * (u - 0.5) * (u - 0.5)
                    - 1.328068155288572e+01) * (u - 0.5) * (u - 0.5) + 1)
            ELSE
                -(((((-7.784894002430293e-03 * sqrt(-2 * ln(1 - u)) - 3.223964580411365e-01) * sqrt(-2 * ln(1 - u))
                    - 2.400758277161838e+00) * sqrt(-2 * ln(1 - u)) - 2.549732539343734e+00) * sqrt(-2 * ln(1 - u))
                    + 4.374664141464968e+00) * sqrt(-2 * ln(1 - u)) + 2.938163982698783e+00)
                / ((((7.784695709041462e-03 * sqrt(-2 * ln(1 - u)) + 3.224671290700398e-01) * sqrt(-2 * ln(1 - u))
                    + 2.445134137142996e+00) * sqrt(-2 * ln(1 - u)) + 3.754408661907416e+00) * sqrt(-2 * ln(1 - u)) + 1)
        END AS z
    FROM weighted
)

SELECT corpus, query_row, doc_row, sum(weight * z) / sqrt(sum(weight * weight)) AS score
FROM quantiles
GROUP BY corpus, query_row, doc_row
