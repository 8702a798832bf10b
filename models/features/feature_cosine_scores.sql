-- name: feature_cosine_scores
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- dialect: duckdb: list_dot_product over feature lists
-- description: The cosine of the named features (seed 004 E2, method 2, a research comparator) for
--   every (query, document) pair; 0 where either list is all zeros. In whole thousandths, the dot
--   product q.d and the squared norms |q|^2, |d|^2 are exact integers. A query ranks its documents by
--   score_key = (q.d)^2 / |d|^2 (the query's norm is the same for all): one correctly rounded
--   division of two exact integers below 2^53 (feature_schema), so equal cosines (identical or
--   proportional feature lists) tie exactly and the row-index rule decides, and a larger cosine never
--   ranks below a smaller one. Not exact: two different cosines closer than about one part in 2^53
--   get the same key and tie. score = sqrt(score_key / |q|^2) = q.d / (|q| |d|) to within a few units
--   in the last place, and never out of the key's order.
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

query_norms AS (
    SELECT query_row, units, list_dot_product(units, units) AS norm2 FROM queries
),

document_norms AS (
    SELECT doc_row, units, list_dot_product(units, units) AS norm2 FROM documents
),

products AS (
    SELECT q.query_row, d.doc_row, q.norm2 AS query_norm2, d.norm2 AS doc_norm2, list_dot_product(q.units, d.units) AS dot
    FROM query_norms AS q
    CROSS JOIN document_norms AS d
),

keys AS (
    SELECT query_row, doc_row, query_norm2, CASE WHEN dot = 0 THEN 0.0 ELSE dot * dot / doc_norm2 END AS score_key
    FROM products
)

SELECT
    {{ corpus | literal }} AS corpus,
    query_row,
    doc_row,
    score_key,
    CASE WHEN score_key = 0 THEN 0.0 ELSE sqrt(score_key / query_norm2) END AS score
FROM keys
