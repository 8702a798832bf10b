-- name: evidence_requirements
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, requirement
-- audits:
-- materialized: view
-- description: Evidence tasks' requirements (raw.evidence_requirements), 0-based as judgments name them.
SELECT bundle, task_id, requirement, text
FROM raw.evidence_requirements
