-- name: dense_ranking
-- version: 3
-- stage: prepare
-- grain: query_row, rank
-- audits:
-- description: The full dense ranking: every document for every query by cosine descending, exact
--   ties by the document's row index (the tie rule of seed 004). A table, so that the 30.8M cosines
--   of BANKING77 are computed once: the runs are its first documents (retrieval_runs), evaluate
--   finds the judged documents' ranks in it (judged_ranking), and a freeze identifies it by its
--   fingerprint and row digest. One corpus (the parameter) per table, so the corpus is no column
--   (retrieval_rankings names it): a constant text column of 30.8M rows costs time to write
--   (docs/performance.md).
WITH scores AS (
    SELECT query_row, doc_row, score FROM models.dense_scores
)

SELECT
    query_row,
    doc_row,
    score,
    row_number() OVER (PARTITION BY query_row ORDER BY score DESC, doc_row) AS rank
FROM scores
