-- name: query_tokens
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, term
-- audits: not_null(corpus, query_row, term); unique_grain
-- description: Every query's distinct terms, tokenised as the documents are (document_tokens): a
--   repeated query term counts once (seed 004). Queries by their row index (query_row).
SELECT DISTINCT corpus, row_index AS query_row, unnest(regexp_extract_all(lower(text), '[\pL\pN]+')) AS term
FROM raw.queries
