-- name: rankings
-- version: 1
-- stage: prepare
-- grain: method, corpus, query_row, rank
-- audits:
-- materialized: view
-- description: The full rankings of every retrieval method side by side (method bm25 or dense).
SELECT 'bm25' AS method, * FROM models.bm25_ranking
UNION ALL
SELECT 'dense' AS method, * FROM models.dense_ranking
