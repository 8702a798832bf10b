-- name: fusion_stouffer
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); accepted_range(score, , )
-- parameters: stouffer_bm25_weight = 1.0, stouffer_dense_weight = 1.0
-- description: Weighted Stouffer (seed 003, eq. 5): S = sum_a w_a z_a / sqrt(sum_a w_a^2), z_a the
--   normal quantile of 1 - p_a. p_a is taken at its mid-value p_a - 1/(2(m+1)), so that the top of the
--   reference (p = 1) keeps a finite z (sql/macros/fusion.sql mid_p_upper). The quantile is Acklam's
--   rational approximation (relative error below 1.2e-9; sql/macros/distributions.sql normal_quantile).
--   Complete candidates only (candidate_completeness).
--   Unique by construction (grouped by its grain).
WITH weighted AS (
    SELECT
        p.corpus,
        p.query_row,
        p.doc_row,
        CASE p.arm WHEN 'bm25' THEN {{ stouffer_bm25_weight }} ELSE {{ stouffer_dense_weight }} END AS weight,
        {{ mid_p_upper('p.p', 'p.reference_size') }} AS u
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
        {{ normal_quantile('u') }} AS z
    FROM weighted
)

SELECT corpus, query_row, doc_row, sum(weight * z) / sqrt(sum(weight * weight)) AS score
FROM quantiles
GROUP BY corpus, query_row, doc_row
