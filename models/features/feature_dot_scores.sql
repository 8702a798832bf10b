-- name: feature_dot_scores
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- dialect: duckdb: list_dot_product over feature lists
-- description: The ordinary dot product of seed 004 E2 (method 3) for every (query, document) pair,
--   without normalisation: score_key = sum q_i d_i in whole thousandths squared (1e-6 units), an
--   integer far below 2^53 and so exact in any order of addition; score = score_key / 1e6. Documents
--   with equal dot products (identical feature lists among them) tie exactly and the row-index rule
--   decides (feature_rankings). A view, computed when read.
WITH queries AS (
    SELECT query_row, CAST(feature_units AS DOUBLE[]) AS units
    FROM models.query_features
    WHERE corpus = {{ corpus | literal }}
),

documents AS (
    SELECT doc_row, CAST(feature_units AS DOUBLE[]) AS units
    FROM models.document_features
    WHERE corpus = {{ corpus | literal }}
),

products AS (
    SELECT q.query_row, d.doc_row, list_dot_product(q.units, d.units) AS score_key
    FROM queries AS q
    CROSS JOIN documents AS d
)

SELECT {{ corpus | literal }} AS corpus, query_row, doc_row, score_key, score_key / 1e6 AS score
FROM products
