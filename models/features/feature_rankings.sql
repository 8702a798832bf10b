-- name: feature_rankings
-- version: 2
-- stage: prepare
-- grain: system, corpus, query_key, rank
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- description: The full rankings of seed 004 E2's four methods over the same training messages, in the
--   rankings shape (system; query_key = the query's row, doc_key = the document's row; rank, score):
--   bm25 (models/retrieval's bm25_ranking, as E1 ranks it), cosine, dot and weighted, each of these
--   three ranking every document for every query by its exact score key descending, exact ties by
--   the document's row index (the tie rule of seed 004). A view, computed when read, like
--   retrieval_rankings.
WITH feature_scores AS (
    SELECT 'cosine' AS system, query_row, doc_row, score_key, score FROM models.feature_cosine_scores
    UNION ALL
    SELECT 'dot' AS system, query_row, doc_row, score_key, score FROM models.feature_dot_scores
    UNION ALL
    SELECT 'weighted' AS system, query_row, doc_row, score_key, score FROM models.feature_weighted_scores
),

ranked AS (
    SELECT
        system,
        query_row,
        doc_row,
        score,
        row_number() OVER (PARTITION BY system, query_row ORDER BY {{ seed_order('score_key') }}) AS rank
    FROM feature_scores
)

SELECT 'bm25' AS system, {{ corpus | literal }} AS corpus, query_row AS query_key, doc_row AS doc_key, rank, score
FROM models.bm25_ranking
UNION ALL
SELECT system, {{ corpus | literal }} AS corpus, query_row AS query_key, doc_row AS doc_key, rank, score FROM ranked
