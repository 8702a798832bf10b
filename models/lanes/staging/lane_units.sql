-- name: lane_units
-- version: 1
-- stage: prepare
-- grain: corpus, topic, unit
-- audits:
-- materialized: view
-- description: The semantic units of every lanes topic (raw.lane_units): the untouched narrative and each
--   subnarrative.
SELECT corpus, topic, topic_row, unit, unit_row, text, qid
FROM raw.lane_units
