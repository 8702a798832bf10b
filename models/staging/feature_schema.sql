-- name: feature_schema
-- version: 1
-- stage: prepare
-- grain: feature
-- audits: not_null(schema_sha256, position, feature, family); unique_grain; at_least_one_row
-- parameters: schema = "banking77_features"
-- materialized: view
-- description: PROVISIONAL copy (issue 15, the E2 engineer's model replaces it): the features of the
--   study's schema (raw.feature_schema of `schema`), each with its 1-based position, family and question.
SELECT schema, schema_sha256, position, feature, family, question
FROM raw.feature_schema
WHERE schema = {{ schema }}
