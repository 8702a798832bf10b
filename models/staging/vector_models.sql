-- name: vector_models
-- version: 1
-- stage: prepare
-- grain: corpus, kind
-- audits:
-- materialized: view
-- description: Which encoder made each corpus's vectors (raw.vector_models).
SELECT corpus, kind, model_name, fingerprint, dimension
FROM raw.vector_models
