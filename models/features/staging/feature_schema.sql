-- name: feature_schema
-- version: 1
-- stage: prepare
-- grain: position
-- audits: not_null(schema, schema_sha256, position, feature, family, question); unique_grain; accepted_range(position, 1, 94)
-- parameters: schema = "banking77_features"
-- materialized: view
-- description: The named features of the study's schema (raw.feature_schema, the parameter `schema`):
--   position (1-based: the order of every feature list), feature, family and the fixed question, with
--   the SHA-256 of the schema file that keys every extraction. One version of a schema at a time
--   (unique position). At most 94 features: a squared dot product of feature lists in thousandths
--   then stays below 2^53 (94 x 1000 x 1000 squared), which keeps the cosine's ranking key and the
--   weighted numerators exact in doubles (feature_cosine_scores, sql/macros/features.sql).
SELECT schema, schema_sha256, position, feature, family, question
FROM raw.feature_schema
WHERE schema = {{ schema | literal }}
