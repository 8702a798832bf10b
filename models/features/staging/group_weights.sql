-- name: group_weights
-- version: 1
-- stage: prepare
-- grain: corpus, group_id, feature
-- audits: unique_grain
-- materialized: view
-- description: E3's manual explicit requirements (raw.group_weights): per group, its named positive
--   feature weights in (0, 1].
SELECT corpus, group_id, feature, weight
FROM raw.group_weights
