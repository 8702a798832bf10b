-- name: control_cases
-- version: 1
-- stage: prepare
-- grain: corpus, case_id
-- audits: unique_grain
-- materialized: view
-- description: E4's controllability cases (raw.control_cases, seed 004): each with its name, file position
--   (case_row) and unwanted feature.
SELECT corpus, case_id, case_row, name, unwanted_feature
FROM raw.control_cases
