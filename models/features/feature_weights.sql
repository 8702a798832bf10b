-- name: feature_weights
-- version: 1
-- stage: prepare
-- grain: feature
-- audits: not_null(feature, position, family, df, documents, weight); unique_grain; accepted_range(weight, 0, )
-- parameters: corpus = "banking77"
-- description: The global feature weights of seed 004 E2, published: per feature, df = the training
--   messages (documents) whose value is >= 0.5 (units >= 500), documents = N, and the weight
--   w = ln((N + 1) / (df + 1)). Unsupervised and from the training split only (no query, no label).
WITH documents AS (
    SELECT count(*) AS documents FROM models.documents WHERE corpus = {{ corpus | literal }}
),

frequencies AS (
    SELECT position, count(*) FILTER (WHERE units >= 500) AS df
    FROM models.feature_values
    WHERE corpus = {{ corpus | literal }} AND split = 'train'
    GROUP BY position
)

SELECT
    s.feature,
    s.position,
    s.family,
    coalesce(f.df, 0) AS df,
    n.documents,
    ln(CAST(n.documents + 1 AS DOUBLE) / (coalesce(f.df, 0) + 1)) AS weight
FROM models.feature_schema AS s
CROSS JOIN documents AS n
LEFT JOIN frequencies AS f ON f.position = s.position
