-- name: case_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits: not_null(query_key, query_id, query_order, doc_key, grade); unique_grain
-- description: E4's desired-intent judgments in the judgments shape (the part e4, seed 004): a
--   training document of one of the case's desired intents is relevant (grade 1); query_key and
--   query_order the case's row, query_id the case id. Desired P@10 and R@10 are the shared measures.
SELECT case_row AS query_key, case_id AS query_id, case_row AS query_order, doc_row AS doc_key,
    CAST(1 AS DOUBLE) AS grade
FROM models.case_intent_documents
WHERE role = 'desired'
