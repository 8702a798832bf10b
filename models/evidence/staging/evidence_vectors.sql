-- name: evidence_vectors
-- version: 1
-- stage: prepare
-- grain: bundle, doc_id
-- audits:
-- materialized: view
-- description: Unit vectors of evidence documents (raw.evidence_vectors; FLOAT[384]).
SELECT bundle, doc_id, vector
FROM raw.evidence_vectors
