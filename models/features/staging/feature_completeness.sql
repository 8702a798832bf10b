-- name: feature_completeness
-- version: 1
-- stage: prepare
-- grain: corpus, split
-- audits:
-- parameters: corpus = "banking77", schema = "banking77_features", provider = "minilm"
-- materialized: view
-- description: Per split of the corpus (train: raw.documents, test: raw.queries), how many messages the
--   extraction store holds in full for the schema loaded as `schema` and the extractor of `provider`:
--   expected, complete (one value for every feature of the schema, all by one extractor), missing, and
--   how many extractors of the provider have values (more than one makes no row complete). No audit, so
--   that receipts can report an incomplete store; feature_coverage refuses one.
WITH schema_features AS (
    SELECT schema_sha256, feature
    FROM raw.feature_schema
    WHERE schema = {{ schema }}
),

feature_count AS (
    SELECT count(*) AS features
    FROM schema_features
),

provider_values AS (
    SELECT v.split, v.row_index, v.extractor, v.feature
    FROM raw.feature_values AS v
    JOIN schema_features AS f ON f.schema_sha256 = v.schema_sha256 AND f.feature = v.feature
    WHERE v.corpus = {{ corpus }} AND v.extractor LIKE {{ provider }} || ':%'
),

row_values AS (
    SELECT
        split,
        row_index,
        count(*) AS stored,
        count(DISTINCT feature) AS features,
        count(DISTINCT extractor) AS extractors
    FROM provider_values
    GROUP BY split, row_index
),

expected_rows AS (
    SELECT 'train' AS split, row_index FROM raw.documents WHERE corpus = {{ corpus }}
    UNION ALL
    SELECT 'test' AS split, row_index FROM raw.queries WHERE corpus = {{ corpus }}
),

split_extractors AS (
    SELECT split, count(DISTINCT extractor) AS extractors
    FROM provider_values
    GROUP BY split
),

row_status AS (
    SELECT
        e.split,
        coalesce(r.stored = c.features AND r.features = c.features AND r.extractors = 1, false) AS complete
    FROM expected_rows AS e
    CROSS JOIN feature_count AS c
    LEFT JOIN row_values AS r ON r.split = e.split AND r.row_index = e.row_index
)

SELECT
    {{ corpus }} AS corpus,
    s.split,
    count(*) AS expected,
    count(*) FILTER (WHERE s.complete) AS complete,
    count(*) FILTER (WHERE NOT s.complete) AS missing,
    coalesce(max(x.extractors), 0) AS extractors
FROM row_status AS s
LEFT JOIN split_extractors AS x ON x.split = s.split
GROUP BY s.split
