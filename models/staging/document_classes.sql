-- name: document_classes
-- version: 1
-- stage: evaluate
-- grain: corpus, doc_id
-- audits:
-- description: The class (e.g. intent) of each document, read through the gate (a table, so that nothing in the warehouse refers to the labels file once it is detached again).
SELECT corpus, doc_id, class
FROM gate.document_classes
