-- name: document_features
-- version: 1
-- stage: prepare
-- grain: corpus, doc_row
-- audits: not_null(corpus, doc_row, doc_id, feature_units); unique_grain
-- depends_on: models.feature_coverage
-- dialect: duckdb: an ordered list aggregate (list ... ORDER BY position)
-- description: Every document's (training message's) feature values as one list of whole thousandths
--   in schema position order (feature_units[i] = units of the feature at position i), for the
--   scores of models/features/. Built only after feature_coverage has passed: every list has
--   one value per feature.
SELECT d.corpus, d.doc_row, d.doc_id, list(v.units ORDER BY v.position) AS feature_units
FROM models.documents AS d
JOIN models.feature_values AS v ON v.corpus = d.corpus AND v.split = 'train' AND v.row_index = d.doc_row
GROUP BY d.corpus, d.doc_row, d.doc_id
