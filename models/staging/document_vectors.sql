-- name: document_vectors
-- version: 1
-- stage: prepare
-- grain: corpus, doc_id
-- audits:
-- materialized: view
-- description: Unit sentence vectors of documents (raw.document_vectors; FLOAT[384]).
SELECT corpus, doc_id, vector
FROM raw.document_vectors
