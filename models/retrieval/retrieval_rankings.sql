-- name: retrieval_rankings
-- version: 3
-- stage: prepare
-- grain: system, corpus, query_key, rank
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- description: The full rankings of every retrieval method side by side, in the rankings shape (system
--   = the method, bm25 or dense; query_key = the query's row, doc_key = the document's row), with the
--   corpus.
SELECT 'bm25' AS system, {{ corpus | literal }} AS corpus, query_row AS query_key, doc_row AS doc_key, rank, score
FROM models.bm25_ranking
UNION ALL
SELECT 'dense' AS system, {{ corpus | literal }} AS corpus, query_row AS query_key, doc_row AS doc_key, rank, score
FROM models.dense_ranking
