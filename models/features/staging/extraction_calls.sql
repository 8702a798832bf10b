-- name: extraction_calls
-- version: 1
-- stage: prepare
-- grain: corpus, extractor, split, row_index, attempt
-- audits:
-- parameters: corpus = "banking77", schema = "banking77_features", provider = "minilm"
-- materialized: view
-- description: Every extraction attempt (raw.extraction_calls, failed ones too) of the corpus, for the
--   schema loaded as `schema` (its SHA-256) and by the extractors of `provider` (seed 004, operational
--   plan): what models/features/extraction_receipts.sql sums. row_index is NULL for a batch call over a
--   split (the minilm stand-in); split 'requirements' holds E3 phrase interpretations.
WITH schema_files AS (
    SELECT DISTINCT schema_sha256
    FROM raw.feature_schema
    WHERE schema = {{ schema }}
)

SELECT
    c.corpus,
    c.extractor,
    c.split,
    c.row_index,
    c.attempt,
    c.model_id,
    c.started_at,
    c.latency_seconds,
    c.status,
    c.prompt_tokens,
    c.completion_tokens,
    c.cost_usd,
    c.possibly_charged,
    c.error
FROM raw.extraction_calls AS c
JOIN schema_files AS s ON s.schema_sha256 = c.schema_sha256
WHERE c.corpus = {{ corpus }} AND c.provider = {{ provider }}
