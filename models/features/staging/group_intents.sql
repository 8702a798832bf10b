-- name: group_intents
-- version: 1
-- stage: prepare
-- grain: corpus, group_id, intent
-- audits: unique_grain
-- materialized: view
-- description: The training intents each E3 group maps to (raw.group_intents): a training message of one
--   of them is relevant to the group's paraphrases (seed 004's label-derived proxy relevance).
SELECT corpus, group_id, intent
FROM raw.group_intents
