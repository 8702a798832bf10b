-- name: query_vectors
-- version: 1
-- stage: prepare
-- grain: corpus, qid
-- audits:
-- materialized: view
-- description: Unit sentence vectors of queries (raw.query_vectors; FLOAT[384]).
SELECT corpus, qid, vector
FROM raw.query_vectors
