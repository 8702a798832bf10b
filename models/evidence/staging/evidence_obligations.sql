-- name: evidence_obligations
-- version: 1
-- stage: evaluate
-- grain: bundle, task_id, doc_id, judge, requirement
-- audits:
-- description: The requirements a judge says an evidence document satisfies, read through the gate (a table, so that nothing in the warehouse refers to the labels file once it is detached again).
SELECT bundle, task_id, doc_id, judge, requirement
FROM gate.evidence_obligations
