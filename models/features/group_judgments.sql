-- name: group_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits: not_null(query_key, query_id, query_order, doc_key, grade); unique_grain
-- parameters: corpus = "banking77"
-- description: E3's label-derived proxy relevance in the judgments shape (seed 004): a training
--   document is relevant (grade 1) to a phrase if its intent is one of the phrase's group's intents.
--   Keys as group_queries (query_id = the item 'G01.1'); the intents are labels, read through
--   document_classes, so this is an evaluate model.
SELECT q.query_key, q.item AS query_id, q.query_order, d.doc_row AS doc_key, CAST(1 AS DOUBLE) AS grade
FROM models.group_queries AS q
JOIN models.group_intents AS i ON i.corpus = q.corpus AND i.group_id = q.group_id
JOIN models.document_classes AS c ON c.corpus = q.corpus AND c.class = i.intent
JOIN models.documents AS d ON d.corpus = c.corpus AND d.doc_id = c.doc_id
WHERE q.corpus = {{ corpus }}
