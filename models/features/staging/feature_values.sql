-- name: feature_values
-- version: 1
-- stage: prepare
-- grain: corpus, split, row_index, feature
-- audits: not_null(corpus, split, row_index, feature, position, units); accepted_range(units, 0, 1000)
-- materialized: view
-- description: The extracted feature values the study reads (raw.feature_values): those of the schema's
--   SHA-256 and of the one extractor of the provider (feature_extractor), with each feature's schema
--   position and the value in whole thousandths, units = round(value * 1000) (the store keeps exact
--   thousandths, so this loses nothing). row_index is the documents' row for split 'train', the
--   queries' row for 'test'.
SELECT
    v.corpus,
    v.split,
    v.row_index,
    v.feature,
    s.position,
    CAST(round(v.value * 1000) AS INTEGER) AS units
FROM raw.feature_values AS v
JOIN models.feature_extractor AS e
    ON e.corpus = v.corpus AND e.schema_sha256 = v.schema_sha256 AND e.extractor = v.extractor
JOIN models.feature_schema AS s ON s.feature = v.feature
