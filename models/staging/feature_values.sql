-- name: feature_values
-- version: 1
-- stage: prepare
-- grain: corpus, split, row_index, feature
-- audits: not_null(corpus, split, row_index, feature, position, units); unique_grain; accepted_range(units, 0, 1000)
-- parameters: schema = "banking77_features", provider = "minilm"
-- materialized: view
-- description: PROVISIONAL copy (issue 15, the E2 engineer's model replaces it): the stored feature
--   values of the study's schema (its SHA-256) made by the one extractor of `provider`
--   (`<provider>:...`; a second extractor repeats the grain, which the audit refuses), as whole
--   thousandths (units = round(value * 1000)), with the feature's schema position.
SELECT
    v.corpus,
    v.split,
    v.row_index,
    v.feature,
    s.position,
    CAST(round(v.value * 1000) AS INTEGER) AS units
FROM raw.feature_values AS v
JOIN raw.feature_schema AS s ON s.schema_sha256 = v.schema_sha256 AND s.feature = v.feature
WHERE s.schema = {{ schema }} AND starts_with(v.extractor, {{ provider }} || ':')
