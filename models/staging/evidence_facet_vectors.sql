-- name: evidence_facet_vectors
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, facet
-- audits:
-- materialized: view
-- description: Unit vectors of every evidence task's facets (raw.evidence_facet_vectors): 0 the question, k + 1
--   requirement k.
SELECT bundle, task_id, facet, vector
FROM raw.evidence_facet_vectors
