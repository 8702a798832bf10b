-- name: requirement_values
-- version: 1
-- stage: prepare
-- grain: corpus, item, feature
-- audits: not_null(corpus, item, feature, weight); unique_grain
-- parameters: schema = "banking77_features", provider = "minilm"
-- materialized: view
-- description: E3's interpreted requirements (raw.requirement_values, seed 004): the feature weights the
--   provider read from each phrase (item), for the study's schema (its SHA-256) and the one extractor
--   of `provider` (`<provider>:...`; a second extractor repeats the grain, which the audit refuses).
WITH study_schema AS (
    SELECT DISTINCT schema_sha256 FROM raw.feature_schema WHERE schema = {{ schema }}
)

SELECT r.corpus, r.item, r.feature, r.weight, r.extractor
FROM raw.requirement_values AS r
JOIN study_schema AS s ON s.schema_sha256 = r.schema_sha256
WHERE starts_with(r.extractor, {{ provider }} || ':')
