-- name: feature_ablations
-- version: 1
-- stage: evaluate
-- grain: variant, measure
-- audits: not_null(variant, kind, removed, variant_order, measure, value, full_value, change, queries); unique_grain; at_least_one_row
-- parameters: ablation_measures = ["Top-1", "Hit@5"]
-- description: Seed 004 E5's table: per ablation (feature_ablation_variants) and measure of
--   `ablation_measures` (Top-1 and Hit@5, the only ones E5 reports), its value over all queries,
--   the full weighted system's (full_value, the E2 figure) and change = value - full_value, all from
--   the shared layer's run_measures. Descriptive diagnostics after the evaluation, never used to
--   select a method.
WITH measured AS (
    SELECT system, measure, value, queries
    FROM models.run_measures
    WHERE subset = 'all' AND measure IN {{ ablation_measures | literal }}
)

SELECT
    a.variant,
    a.kind,
    a.removed,
    a.variant_order,
    m.measure,
    m.value,
    f.value AS full_value,
    m.value - f.value AS change,
    m.queries
FROM models.feature_ablation_variants AS a
JOIN measured AS m ON m.system = a.variant
JOIN measured AS f ON f.system = 'weighted' AND f.measure = m.measure
