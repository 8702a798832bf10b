-- name: bm25_ranking
-- version: 3
-- stage: prepare
-- grain: query_row, rank
-- audits:
-- description: The full BM25 ranking: every document for every query by score descending, exact
--   ties by the document's row index in its source (seed 004). A table (3,080 x 10,003 rows for
--   BANKING77), so that the BM25 sums are computed once: the runs are its first documents
--   (retrieval_runs), evaluate finds the judged documents' ranks in it (judged_ranking), and a freeze
--   identifies it by its fingerprint and row digest. One corpus (the parameter) per table, so the
--   corpus is no column (retrieval_rankings names it), as in dense_ranking.
WITH scores AS (
    SELECT query_row, doc_row, score FROM models.bm25_scores
)

SELECT
    query_row,
    doc_row,
    score,
    row_number() OVER (PARTITION BY query_row ORDER BY score DESC, doc_row) AS rank
FROM scores
