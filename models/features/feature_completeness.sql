-- name: feature_completeness
-- version: 1
-- stage: prepare
-- grain: corpus, split
-- audits: not_null(corpus, split, features, rows, complete, missing); unique_grain; accepted_range(missing, 0, 0)
-- parameters: corpus = "banking77"
-- description: For the corpus and each split, how many rows (training messages = documents, test messages =
--   queries) have a value for every feature of the schema (complete) and how many do not (missing).
--   A row is complete with exactly one value per feature (a value given twice makes it incomplete too).
--   The audit refuses any missing row: an incomplete extraction produces no ranking (seed 004: no
--   incomplete extraction may produce headline metrics), and every feature list of
--   document_features and query_features has one value per feature, in schema order.
WITH schema_size AS (
    SELECT count(*) AS features FROM models.feature_schema
),

texts AS (
    SELECT corpus, 'train' AS split, doc_row AS row_index FROM models.documents WHERE corpus = {{ corpus | literal }}
    UNION ALL
    SELECT corpus, 'test' AS split, query_row AS row_index FROM models.queries WHERE corpus = {{ corpus | literal }}
),

extracted AS (
    SELECT corpus, split, row_index, count(*) AS values_found, count(DISTINCT position) AS features_found
    FROM models.feature_values
    GROUP BY corpus, split, row_index
)

SELECT
    t.corpus,
    t.split,
    max(z.features) AS features,
    count(*) AS rows,
    count(*) FILTER (WHERE x.values_found = z.features AND x.features_found = z.features) AS complete,
    count(*) - count(*) FILTER (WHERE x.values_found = z.features AND x.features_found = z.features) AS missing
FROM texts AS t
CROSS JOIN schema_size AS z
LEFT JOIN extracted AS x ON x.corpus = t.corpus AND x.split = t.split AND x.row_index = t.row_index
GROUP BY t.corpus, t.split
