-- name: case_intent_documents
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: case_id, role, doc_row
-- audits: not_null(case_id, case_row, role, doc_row, doc_id, intent); unique_grain
-- parameters: corpus = "banking77"
-- description: The training documents of each E4 case's label-derived intent groups (seed 004): those
--   whose intent is one of the case's desired intents (role 'desired') or unwanted intents ('unwanted').
--   The intents are labels, read through document_classes, so this is an evaluate model.
SELECT c.case_id, c.case_row, i.role, d.doc_row, d.doc_id, i.intent
FROM models.control_cases AS c
JOIN models.case_intents AS i ON i.corpus = c.corpus AND i.case_id = c.case_id
JOIN models.document_classes AS l ON l.corpus = c.corpus AND l.class = i.intent
JOIN models.documents AS d ON d.corpus = l.corpus AND d.doc_id = l.doc_id
WHERE c.corpus = {{ corpus }}
