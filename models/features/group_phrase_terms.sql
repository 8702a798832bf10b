-- name: group_phrase_terms
-- version: 1
-- stage: prepare
-- grain: query_key, term
-- audits: not_null(corpus, query_key, term); unique_grain
-- description: Every E3 phrase's distinct terms, tokenised as the documents are (the terms macro,
--   document_tokens): a repeated term counts once (seed 004's BM25).
SELECT DISTINCT corpus, query_key, unnest({{ terms('text') }}) AS term
FROM models.group_queries
