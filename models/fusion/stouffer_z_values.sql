-- name: stouffer_z_values
-- version: 1
-- stage: evaluate
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, block, z_bm25, z_dense, dense_score); unique_grain; at_least_one_row
-- columns: block = "The query's held-out block (fusion_query_groups)", z_bm25 = "Phi^-1(1 - mid-p) of the BM25
--   arm's p-value, as fusion_stouffer takes it", z_dense = "The same of the dense arm's", dense_score =
--   "The dense arm's score, the first tie-breaker"
-- description: Every complete candidate's normal scores z_a = Phi^-1(1 - (p_a - 1/(2(m + 1)))) per arm
--   (eq. 5's z, as fusion_stouffer computes them) with the query's held-out block: the inputs of the
--   weighted Stouffer whose weights delta' Sigma^-1 are estimated on the other blocks (stouffer_weights,
--   stouffer_learned_rankings). Label-free; an evaluate model because the blocks' groups may be read through
--   the gate.
WITH upper AS (
    SELECT p.corpus, p.query_row, p.doc_row, p.arm, {{ mid_p_upper('p.p', 'p.reference_size') }} AS u
    FROM models.arm_p_values AS p
    JOIN models.candidate_completeness AS c
        ON c.corpus = p.corpus AND c.query_row = p.query_row AND c.doc_row = p.doc_row
    WHERE c.complete
),

quantiles AS (
    SELECT corpus, query_row, doc_row, arm, {{ normal_quantile('u') }} AS z
    FROM upper
)

SELECT
    z.corpus,
    z.query_row,
    z.doc_row,
    g.block,
    max(CASE WHEN z.arm = 'bm25' THEN z.z END) AS z_bm25,
    max(CASE WHEN z.arm = 'dense' THEN z.z END) AS z_dense,
    max(d.score) AS dense_score
FROM quantiles AS z
JOIN models.fusion_query_groups AS g ON g.query_row = z.query_row
JOIN models.fusion_candidates AS d
    ON d.arm = 'dense' AND d.corpus = z.corpus AND d.query_row = z.query_row AND d.doc_row = z.doc_row
GROUP BY z.corpus, z.query_row, z.doc_row, g.block
