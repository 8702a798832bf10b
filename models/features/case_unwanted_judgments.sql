-- name: case_unwanted_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits: not_null(query_key, query_id, query_order, doc_key, grade); unique_grain
-- description: E4's unwanted-intent judgments (the part e4_unwanted, seed 004): the same rankings
--   judged by the case's unwanted intents (grade 1), query_id `<case>/unwanted`, so that the
--   unwanted-label rate in the top 10 is that part's shared P@10.
SELECT case_row AS query_key, case_id || '/unwanted' AS query_id, case_row AS query_order, doc_row AS doc_key,
    CAST(1 AS DOUBLE) AS grade
FROM models.case_intent_documents
WHERE role = 'unwanted'
