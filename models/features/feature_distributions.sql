-- name: feature_distributions
-- version: 1
-- stage: prepare
-- grain: feature, split
-- audits: not_null(feature, position, family, split, rows, mean, p10, p50, p90, share_high); unique_grain
-- parameters: corpus = "banking77"
-- description: The distribution of every feature's extracted values per split (train = documents, test
--   = queries), for the report (seed 004: publish feature distributions): rows, the mean (exact), the
--   10th, 50th and 90th percentiles (interpolated, as numpy's default) and share_high, the share of
--   values >= 0.5 (what df counts on the training split). Label-free.
SELECT
    s.feature,
    s.position,
    s.family,
    v.split,
    count(*) AS rows,
    {{ mean('v.units / 1000') }} AS mean,
    {{ quantile('v.units / 1000', 0.1) }} AS p10,
    {{ median('v.units / 1000') }} AS p50,
    {{ quantile('v.units / 1000', 0.9) }} AS p90,
    count(*) FILTER (WHERE v.units >= 500) / count(*) AS share_high
FROM models.feature_values AS v
JOIN models.feature_schema AS s ON s.position = v.position
WHERE v.corpus = {{ corpus | literal }}
GROUP BY s.feature, s.position, s.family, v.split
