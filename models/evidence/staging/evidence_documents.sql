-- name: evidence_documents
-- version: 1
-- stage: prepare
-- grain: bundle, doc_id
-- audits:
-- materialized: view
-- description: Evidence bundles' documents (raw.evidence_documents).
SELECT bundle, doc_id, row_index, text
FROM raw.evidence_documents
