-- name: case_weights
-- version: 1
-- stage: prepare
-- grain: corpus, case_id, feature
-- audits: unique_grain
-- materialized: view
-- description: E4's positive queries (raw.case_weights): per case, its named positive feature weights in (0, 1].
SELECT corpus, case_id, feature, weight
FROM raw.case_weights
