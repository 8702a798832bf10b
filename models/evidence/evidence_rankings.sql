-- name: evidence_rankings
-- version: 1
-- stage: evaluate
-- grain: system, query_key, rank
-- audits:
-- materialized: view
-- description: Every method's selection (evidence_selections, and the diagnostic oracle) in the
--   rankings shape: system = the method, query_key = the task, doc_key = the document, rank = the
--   selection order; selections have no score (NULL). An evaluate model: the oracle reads labels.
SELECT method AS system, task_id AS query_key, doc_id AS doc_key, rank, CAST(NULL AS DOUBLE) AS score
FROM models.evidence_selections
UNION ALL
SELECT 'oracle' AS system, task_id AS query_key, doc_id AS doc_key, rank, CAST(NULL AS DOUBLE) AS score
FROM models.evidence_oracle
