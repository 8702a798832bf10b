-- name: group_rankings
-- version: 1
-- stage: prepare
-- grain: system, query_key, rank
-- audits: not_null(system, corpus, query_key, doc_key, rank, score); unique_grain
-- description: E3's full rankings in the rankings shape (seed 004): every training document for every
--   phrase by 'phrase-bm25' (group_phrase_bm25), 'interpreted-requirements' and 'manual-requirements'
--   (requirement_scores), score descending, exact ties by the document's row index; query_key as
--   group_queries, doc_key the document's row.
WITH scores AS (
    SELECT 'phrase-bm25' AS system, corpus, query_key, doc_row, score FROM models.group_phrase_bm25
    UNION ALL
    SELECT s.system, s.corpus, s.query_key, s.doc_row, s.score
    FROM models.requirement_scores AS s
    WHERE s.system IN ('interpreted-requirements', 'manual-requirements')
)

SELECT
    system,
    corpus,
    query_key,
    doc_row AS doc_key,
    row_number() OVER (PARTITION BY system, query_key ORDER BY {{ seed_order() }}) AS rank,
    score
FROM scores
