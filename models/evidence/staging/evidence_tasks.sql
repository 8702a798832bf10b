-- name: evidence_tasks
-- version: 1
-- stage: prepare
-- grain: bundle, task_id
-- audits:
-- materialized: view
-- description: Evidence bundles' tasks (raw.evidence_tasks): the question, the split, the position in
--   tasks.jsonl.
SELECT bundle, task_id, row_index, question, split
FROM raw.evidence_tasks
