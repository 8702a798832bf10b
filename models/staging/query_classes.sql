-- name: query_classes
-- version: 1
-- stage: evaluate
-- grain: corpus, qid
-- audits:
-- description: The class (e.g. intent) of each query, read through the gate (a table, so that nothing in the warehouse refers to the labels file once it is detached again).
SELECT corpus, qid, class
FROM gate.query_classes
