-- name: dense_scores
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- dialect: duckdb: FLOAT[384] vectors and array_inner_product
-- description: Cosine of every (query, document) pair of a corpus: the inner product of their unit
--   MiniLM vectors (models.query_vectors, models.document_vectors; the encoder's fingerprint is part of
--   those tables' source hashes, so of this model's fingerprint). One corpus (the parameter) at a time.
WITH documents AS (
    SELECT d.corpus, d.doc_row, v.vector
    FROM models.documents AS d
    JOIN models.document_vectors AS v ON v.corpus = d.corpus AND v.doc_id = d.doc_id
    WHERE d.corpus = {{ corpus | literal }}
),

queries AS (
    SELECT q.corpus, q.query_row, v.vector
    FROM models.queries AS q
    JOIN models.query_vectors AS v ON v.corpus = q.corpus AND v.qid = q.qid
    WHERE q.corpus = {{ corpus | literal }}
)

SELECT q.corpus, q.query_row, d.doc_row, array_inner_product(q.vector, d.vector) AS score
FROM queries AS q
CROSS JOIN documents AS d
