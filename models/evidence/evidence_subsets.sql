-- name: evidence_subsets
-- version: 1
-- stage: prepare
-- grain: subset, query_key
-- audits: not_null(subset, query_key); unique_grain
-- parameters: bundle = "evidence_demo"
-- description: The evidence study's own task subsets (seed 000, "subsets"): each split's tasks
--   (development, final), by task id.
SELECT split AS subset, task_id AS query_key
FROM models.evidence_tasks
WHERE bundle = {{ bundle | literal }}
