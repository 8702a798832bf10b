-- name: documents
-- version: 1
-- stage: prepare
-- grain: corpus, doc_id
-- audits:
-- materialized: view
-- description: The documents of every corpus (raw.documents); doc_row is the row index in the source file, the
--   stable tie-breaker.
SELECT corpus, doc_id, row_index AS doc_row, text
FROM raw.documents
