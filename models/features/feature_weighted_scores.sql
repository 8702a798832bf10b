-- name: feature_weighted_scores
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- dialect: duckdb: list_dot_product over feature lists
-- description: Weighted relevance of seed 004 E2 (method 4) for every (query, document) pair:
--   sum(w_i q_i d_i) / sum(w_i q_i), 0 for a zero denominator (sql/macros/features.sql, with the query
--   side of weighted_queries). score_key is the exact integer numerator, which a query ranks its
--   documents by (the denominator is the query's alone): equal numerators (identical feature lists
--   among them) tie exactly and the row-index rule decides. Exact given the weights in whole 1e-6
--   units; score is the numerator over the denominator, never out of the key's order.
WITH queries AS (
    SELECT query_row, CAST(terms AS DOUBLE[]) AS terms, denominator
    FROM models.weighted_queries
    WHERE corpus = {{ corpus | literal }}
),

documents AS (
    {{ feature_lists('document_features', 'doc_row', corpus) | indent(4) }}
),

numerators AS (
    SELECT q.query_row, d.doc_row, q.denominator, {{ weighted_numerator('q.terms', 'd.units') }} AS score_key
    FROM queries AS q
    CROSS JOIN documents AS d
)

SELECT
    {{ corpus | literal }} AS corpus,
    query_row,
    doc_row,
    score_key,
    {{ weighted_relevance('score_key', 'denominator') }} AS score
FROM numerators
