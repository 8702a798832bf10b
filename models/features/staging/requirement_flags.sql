-- name: requirement_flags
-- version: 1
-- stage: prepare
-- grain: corpus, item
-- audits: not_null(corpus, item, unsupported, review); unique_grain
-- parameters: schema = "banking77_features", provider = "minilm"
-- materialized: view
-- description: The interpretation diagnostics of each E3 phrase (raw.requirement_flags): unsupported,
--   review (the uncertain-filter handling of seed 004), coverage and a note, for the study's schema and
--   the one extractor of `provider` (a second one repeats the grain, which the audit refuses).
WITH study_schema AS (
    SELECT DISTINCT schema_sha256 FROM raw.feature_schema WHERE schema = {{ schema }}
)

SELECT f.corpus, f.item, f.unsupported, f.review, f.coverage, f.note, f.extractor
FROM raw.requirement_flags AS f
JOIN study_schema AS s ON s.schema_sha256 = f.schema_sha256
WHERE starts_with(f.extractor, {{ provider }} || ':')
