-- name: retrieval_metrics
-- version: 1
-- stage: evaluate
-- grain: method, corpus, subset, measure
-- audits: not_null(method, corpus, subset, measure, value, queries); unique_grain; accepted_range(value, 0, 1)
-- description: Every measure per method, over all queries and over the queries whose text does not
--   occur in the documents (subset without_training_duplicates, seed 004). Top-1 and Hit@5 are hit
--   rates and carry a Wilson 95% interval: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n),
--   z = 1.959964. macro-Top-1 is the mean over classes of each class's Top-1.
WITH subsets AS (
    SELECT 'all' AS subset, m.* FROM models.retrieval_query_metrics AS m
    UNION ALL
    SELECT 'without_training_duplicates' AS subset, m.*
    FROM models.retrieval_query_metrics AS m
    JOIN models.query_duplicates AS d ON d.corpus = m.corpus AND d.query_row = m.query_row
    WHERE NOT d.in_documents
),

means AS (
    SELECT method, corpus, subset, 'Top-1' AS measure, avg(top1) AS value, count(*) AS queries FROM subsets GROUP BY method, corpus, subset
    UNION ALL
    SELECT method, corpus, subset, 'Hit@5', avg(hit5), count(*) FROM subsets GROUP BY method, corpus, subset
    UNION ALL
    SELECT method, corpus, subset, 'R@5', avg(recall5), count(*) FROM subsets GROUP BY method, corpus, subset
    UNION ALL
    SELECT method, corpus, subset, 'RR', avg(rr), count(*) FROM subsets GROUP BY method, corpus, subset
    UNION ALL
    SELECT method, corpus, subset, 'nDCG@10', avg(ndcg10), count(*) FROM subsets GROUP BY method, corpus, subset
    UNION ALL
    SELECT method, corpus, subset, 'P@5', avg(p5), count(*) FROM subsets GROUP BY method, corpus, subset
),

per_class AS (
    SELECT method, corpus, subset, class, avg(top1) AS top1, count(*) AS queries
    FROM subsets
    GROUP BY method, corpus, subset, class
),

macro AS (
    SELECT method, corpus, subset, 'macro-Top-1' AS measure, avg(top1) AS value, sum(queries) AS queries
    FROM per_class
    GROUP BY method, corpus, subset
),

measured AS (
    SELECT * FROM means
    UNION ALL
    SELECT * FROM macro
)

SELECT
    method,
    corpus,
    subset,
    measure,
    value,
    CASE WHEN measure IN ('Top-1', 'Hit@5') THEN
        (value + 1.959964 * 1.959964 / (2 * queries)
         - 1.959964 * sqrt(value * (1 - value) / queries + 1.959964 * 1.959964 / (4 * queries * queries)))
        / (1 + 1.959964 * 1.959964 / queries)
    END AS ci_low,
    CASE WHEN measure IN ('Top-1', 'Hit@5') THEN
        (value + 1.959964 * 1.959964 / (2 * queries)
         + 1.959964 * sqrt(value * (1 - value) / queries + 1.959964 * 1.959964 / (4 * queries * queries)))
        / (1 + 1.959964 * 1.959964 / queries)
    END AS ci_high,
    queries
FROM measured
