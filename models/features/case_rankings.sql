-- name: case_rankings
-- version: 1
-- stage: prepare
-- grain: system, query_key, rank
-- audits: not_null(system, corpus, case_id, query_key, doc_key, rank, score); unique_grain
-- parameters: filter_units = 200
-- description: E4's rankings in the rankings shape (seed 004), query_key the case's row, doc_key the
--   document's row, score descending and exact ties by the row index: 'positive' and the three
--   'penalty-<lambda>' rankings over every training document, and 'hard-filter', the positive-only
--   ranking restricted to the documents whose unwanted feature is <= 0.2 (unwanted_units <=
--   filter_units = 200).
WITH scores AS (
    SELECT system, corpus, case_id, query_key, doc_row, score
    FROM models.case_scores
    UNION ALL
    SELECT 'hard-filter' AS system, corpus, case_id, query_key, doc_row, score
    FROM models.case_scores
    WHERE system = 'positive' AND unwanted_units <= {{ filter_units }}
)

SELECT
    system,
    corpus,
    case_id,
    query_key,
    doc_row AS doc_key,
    row_number() OVER (PARTITION BY system, query_key ORDER BY {{ seed_order() }}) AS rank,
    score
FROM scores
