-- name: case_intents
-- version: 1
-- stage: prepare
-- grain: corpus, case_id, intent
-- audits: unique_grain
-- materialized: view
-- description: E4's label-derived intent groups (raw.case_intents): per case, the desired and the unwanted
--   training intents (role).
SELECT corpus, case_id, intent, role
FROM raw.case_intents
