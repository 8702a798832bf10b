-- name: dense_ranking
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, rank
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- description: The full dense ranking: every document for every query by cosine descending, exact
--   ties by the document's row index (the tie rule of seed 004). A view, computed when read.
WITH scores AS (
    SELECT query_row, doc_row, score FROM models.dense_scores
)

SELECT
    {{ corpus | literal }} AS corpus,
    query_row,
    doc_row,
    score,
    row_number() OVER (PARTITION BY query_row ORDER BY score DESC, doc_row) AS rank
FROM scores
