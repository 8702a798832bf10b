-- name: query_features
-- version: 1
-- stage: prepare
-- grain: corpus, query_row
-- audits: not_null(corpus, query_row, qid, feature_units); unique_grain
-- depends_on: models.feature_coverage
-- dialect: duckdb: an ordered list aggregate (list ... ORDER BY position)
-- description: Every query's (test message's) feature values as one list of whole thousandths in
--   schema position order, like document_features. Seed 004 E2: the query's values are property
--   evidence extracted by the same extractor, not interpreted search importance.
SELECT q.corpus, q.query_row, q.qid, list(v.units ORDER BY v.position) AS feature_units
FROM models.queries AS q
JOIN models.feature_values AS v ON v.corpus = q.corpus AND v.split = 'test' AND v.row_index = q.query_row
GROUP BY q.corpus, q.query_row, q.qid
