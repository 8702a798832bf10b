-- name: feature_correlations
-- version: 1
-- stage: prepare
-- grain: feature_a, feature_b
-- audits: not_null(feature_a, feature_b, position_a, position_b, rows); unique_grain; accepted_range(correlation, -1.000001, 1.000001)
-- parameters: corpus = "banking77"
-- description: Pearson's correlation of every pair of features over the training messages' values, for
--   the report's discussion of correlated features (seed 004). From exact integer sums of the whole
--   thousandths (n, sums, sums of products and squares), so it does not depend on the order of
--   addition; NULL where a feature has the same value everywhere. Label-free.
WITH train AS (
    SELECT row_index, position, feature, CAST(units AS BIGINT) AS units
    FROM models.feature_values
    WHERE corpus = {{ corpus | literal }} AND split = 'train'
),

sums AS (
    SELECT
        a.feature AS feature_a,
        b.feature AS feature_b,
        a.position AS position_a,
        b.position AS position_b,
        count(*) AS n,
        sum(a.units) AS sa,
        sum(b.units) AS sb,
        sum(a.units * b.units) AS sab,
        sum(a.units * a.units) AS saa,
        sum(b.units * b.units) AS sbb
    FROM train AS a
    JOIN train AS b ON b.row_index = a.row_index AND b.position > a.position
    GROUP BY a.feature, b.feature, a.position, b.position
)

SELECT
    feature_a,
    feature_b,
    position_a,
    position_b,
    n AS rows,
    CASE
        WHEN n * saa = sa * sa OR n * sbb = sb * sb THEN NULL
        ELSE CAST(n * sab - sa * sb AS DOUBLE) / sqrt(CAST(n * saa - sa * sa AS DOUBLE) * CAST(n * sbb - sb * sb AS DOUBLE))
    END AS correlation
FROM sums
