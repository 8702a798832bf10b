-- name: feature_ablation_variants
-- version: 1
-- stage: prepare
-- grain: variant
-- audits: not_null(variant, kind, removed, variant_order); unique_grain; at_least_one_row
-- description: The ablations of seed 004 E5: weighted relevance without each single feature (kind
--   'feature', system 'weighted-without-<feature>') and without each family (kind 'family', system
--   'weighted-without-family-<family>'), in schema order, the families after the features.
WITH families AS (
    SELECT family, min(position) AS first_position
    FROM models.feature_schema
    GROUP BY family
),

variants AS (
    SELECT 'weighted-without-' || feature AS variant, 'feature' AS kind, feature AS removed, position AS variant_order
    FROM models.feature_schema
    UNION ALL
    SELECT
        'weighted-without-family-' || family AS variant,
        'family' AS kind,
        family AS removed,
        1000 + row_number() OVER (ORDER BY first_position) AS variant_order
    FROM families
)

SELECT variant, kind, removed, variant_order
FROM variants
