-- name: evidence_judgments
-- version: 1
-- stage: evaluate
-- grain: bundle, task_id, doc_id, judge
-- audits:
-- description: Every judge's grade of a pooled evidence (task, document) pair, read through the gate (a table, so that nothing in the warehouse refers to the labels file once it is detached again).
SELECT bundle, task_id, doc_id, judge, grade, line
FROM gate.evidence_judgments
