-- name: group_paraphrases
-- version: 1
-- stage: prepare
-- grain: corpus, item
-- audits: unique_grain
-- materialized: view
-- description: E3's phrase queries (raw.group_paraphrases, seed 004): four fixed paraphrases per semantic
--   group, by group (group_row: its position in the groups file) and paraphrase (1-4); item = group_id.paraphrase.
SELECT corpus, group_id, group_row, paraphrase, item, text
FROM raw.group_paraphrases
