-- name: query_tokens
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, term
-- audits: not_null(corpus, query_row, term); unique_grain
-- description: Every query's distinct terms, tokenised as the documents are (document_tokens): a
--   repeated query term counts once (seed 004). Queries by their row index (query_row).
SELECT DISTINCT corpus, query_row, unnest({{ terms('text') }}) AS term
FROM models.queries
