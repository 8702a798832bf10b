-- name: feature_weights
-- version: 1
-- stage: prepare
-- grain: feature
-- audits: not_null(feature, position, family, df, documents, weight); unique_grain; accepted_range(weight, 0, )
-- parameters: corpus = "banking77"
-- description: PROVISIONAL copy (issue 15, the E2 engineer's model replaces it): the global weight of
--   each feature (seed 004 E2), w = ln((N + 1) / (df + 1)), df counting the training documents whose
--   value is >= 0.5 (units >= 500), N the training documents of `corpus`.
WITH collection AS (
    SELECT count(*) AS documents FROM models.documents WHERE corpus = {{ corpus }}
),

frequencies AS (
    SELECT s.feature, s.position, s.family, count(v.row_index) AS df
    FROM models.feature_schema AS s
    LEFT JOIN models.feature_values AS v
        ON v.feature = s.feature AND v.corpus = {{ corpus }} AND v.split = 'train' AND v.units >= 500
    GROUP BY s.feature, s.position, s.family
)

SELECT f.feature, f.position, f.family, f.df, c.documents, ln((c.documents + 1) / (f.df + 1)) AS weight
FROM frequencies AS f
CROSS JOIN collection AS c
