-- name: evidence_pools
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, doc_id
-- audits:
-- materialized: view
-- description: Each evidence task's judged pool (raw.evidence_pools), in pool-key.json order.
SELECT bundle, task_id, doc_id, position
FROM raw.evidence_pools
