-- name: stouffer_learned_rankings
-- version: 1
-- stage: evaluate
-- grain: system, query_key, rank
-- audits: not_null(system, query_key, doc_key, rank, score); accepted_range(rank, 1, )
-- description: Weighted Stouffer with the cross-fitted weights of stouffer_weights (eq. 5: Lambda = C +
--   delta' Sigma^-1 z), in the rankings shape (system stouffer_learned): each query's complete candidates
--   scored with the weights estimated on the other blocks, ranked in section 8's total order (score, the
--   dense score, the row type, the row id; sql/macros/fusion.sql fusion_order). The protocol evaluates it
--   beside the fixed-weight fusion_stouffer. Unique by construction (row_number per query).
SELECT
    'stouffer_learned' AS system,
    z.query_row AS query_key,
    z.doc_row AS doc_key,
    row_number() OVER (
        PARTITION BY z.query_row
        ORDER BY {{ fusion_order('w.weight_bm25 * z.z_bm25 + w.weight_dense * z.z_dense', 'z.dense_score', "'document'", 'z.doc_row') }}
    ) AS rank,
    w.weight_bm25 * z.z_bm25 + w.weight_dense * z.z_dense AS score
FROM models.stouffer_z_values AS z
JOIN models.stouffer_weights AS w ON w.fold = z.block
