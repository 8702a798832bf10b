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
--   decides (feature_rankings). With the squared norms |q|^2 and |d|^2 (exact integers too), which
--   the cosine divides by (feature_cosine_scores). A view, computed when read.
WITH queries AS (
    {{ feature_lists('query_features', 'query_row', corpus) | indent(4) }}
),

documents AS (
    {{ feature_lists('document_features', 'doc_row', corpus) | indent(4) }}
),

products AS (
    SELECT
        q.query_row,
        d.doc_row,
        list_dot_product(q.units, d.units) AS score_key,
        q.norm2 AS query_norm2,
        d.norm2 AS doc_norm2
    FROM queries AS q
    CROSS JOIN documents AS d
)

SELECT {{ corpus | literal }} AS corpus, query_row, doc_row, score_key, score_key / 1e6 AS score, query_norm2, doc_norm2
FROM products
