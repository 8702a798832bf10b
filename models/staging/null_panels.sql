-- name: null_panels
-- version: 1
-- stage: prepare
-- grain: panel, position
-- audits:
-- materialized: view
-- description: Null reference panels (raw.null_panels): documents drawn once, without replacement, from a
--   recorded seed.
SELECT panel, corpus, position, doc_row, seed
FROM raw.null_panels
