-- name: feature_extractor
-- version: 1
-- stage: prepare
-- grain: corpus
-- audits: not_null(corpus, schema, schema_sha256, provider, extractor, rows); unique_grain
-- parameters: schema = "banking77_features", provider = "minilm"
-- description: Per corpus, the one extractor whose values the study reads: of the provider the
--   parameter `provider` names ('minilm:<12 hex>' or 'http:<model>'), for the SHA-256 of the schema
--   `schema`, with the values it extracted (rows). Two extractors of that provider for one corpus and
--   schema (another model, other settings) are refused by unique_grain: the study never mixes them.
WITH versions AS (
    SELECT DISTINCT schema, schema_sha256
    FROM models.feature_schema
)

SELECT
    v.corpus,
    s.schema,
    v.schema_sha256,
    {{ provider | literal }} AS provider,
    v.extractor,
    count(*) AS rows
FROM raw.feature_values AS v
JOIN versions AS s ON s.schema_sha256 = v.schema_sha256
WHERE starts_with(v.extractor, {{ provider | literal }} || ':')
GROUP BY v.corpus, s.schema, v.schema_sha256, v.extractor
