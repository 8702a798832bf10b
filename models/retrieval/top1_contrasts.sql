-- name: top1_contrasts
-- version: 1
-- stage: evaluate
-- grain: corpus, subset, contrast
-- audits: not_null(corpus, subset, contrast, mean, ci_low, ci_high, replicates); unique_grain; at_least_one_row
-- parameters: contrast_a = "dense", contrast_b = "bm25", bootstrap_plan = "top1_bootstrap"
-- description: Paired bootstrap of the difference in Top-1 between two methods (a - b): per replicate
--   of the stored, seeded plan (raw.resample_plans), the mean difference over the drawn queries; the
--   interval is the 2.5% and 97.5% quantile of those means. The plan draws query positions (row
--   indices); for the subset without training duplicates, draws of excluded queries are dropped.
--   Differences are whole numbers (-1, 0, 1), so every mean is exact at any thread count.
WITH differences AS (
    SELECT
        a.corpus,
        a.query_row,
        a.top1 - b.top1 AS difference,
        d.in_documents
    FROM models.retrieval_query_metrics AS a
    JOIN models.retrieval_query_metrics AS b ON b.corpus = a.corpus AND b.query_row = a.query_row
    JOIN models.query_duplicates AS d ON d.corpus = a.corpus AND d.query_row = a.query_row
    WHERE a.method = {{ contrast_a | literal }} AND b.method = {{ contrast_b | literal }}
),

subsets AS (
    SELECT 'all' AS subset, corpus, query_row, difference FROM differences
    UNION ALL
    SELECT 'without_training_duplicates', corpus, query_row, difference FROM differences WHERE NOT in_documents
),

replicates AS (
    SELECT s.corpus, s.subset, p.replicate, avg(s.difference) AS mean_difference
    FROM raw.resample_plans AS p
    JOIN subsets AS s ON s.query_row = p.item
    WHERE p.plan = {{ bootstrap_plan | literal }}
    GROUP BY s.corpus, s.subset, p.replicate
),

observed AS (
    SELECT corpus, subset, avg(difference) AS mean
    FROM subsets
    GROUP BY corpus, subset
)

SELECT
    o.corpus,
    o.subset,
    {{ contrast_a | literal }} || ' - ' || {{ contrast_b | literal }} AS contrast,
    o.mean,
    quantile_cont(r.mean_difference, 0.025) AS ci_low,
    quantile_cont(r.mean_difference, 0.975) AS ci_high,
    count(*) AS replicates
FROM observed AS o
JOIN replicates AS r ON r.corpus = o.corpus AND r.subset = o.subset
GROUP BY o.corpus, o.subset, o.mean
