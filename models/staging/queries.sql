-- name: queries
-- version: 1
-- stage: prepare
-- grain: corpus, qid
-- audits:
-- materialized: view
-- description: The queries of every corpus (raw.queries); query_row is the row index in the source file.
SELECT corpus, qid, row_index AS query_row, text
FROM raw.queries
