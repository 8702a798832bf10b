-- name: dense_scores
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- dialect: duckdb: FLOAT[384] vectors and array_inner_product
-- description: Cosine of every (query, document) pair of a corpus: the inner product of their unit
--   MiniLM vectors (raw.query_vectors, raw.document_vectors; the encoder's fingerprint is part of
--   those tables' source hashes, so of this model's fingerprint). One corpus (the parameter) at a time.
WITH documents AS (
    SELECT d.corpus, d.row_index AS doc_row, v.vector
    FROM raw.documents AS d
    JOIN raw.document_vectors AS v ON v.corpus = d.corpus AND v.doc_id = d.doc_id
    WHERE d.corpus = {{ corpus | literal }}
),

queries AS (
    SELECT q.corpus, q.row_index AS query_row, v.vector
    FROM raw.queries AS q
    JOIN raw.query_vectors AS v ON v.corpus = q.corpus AND v.qid = q.qid
    WHERE q.corpus = {{ corpus | literal }}
)

SELECT q.corpus, q.query_row, d.doc_row, array_inner_product(q.vector, d.vector) AS score
FROM queries AS q
CROSS JOIN documents AS d
