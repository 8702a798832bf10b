-- name: evidence_metrics
-- version: 1
-- stage: evaluate
-- grain: bundle, subset, method, measure
-- audits: not_null(bundle, subset, method, measure, value, tasks); unique_grain; at_least_one_row
-- description: Each method's measures per subset of tasks (seed 000, "subsets": all, and each split;
--   a subset is named by its split and its number of tasks, e.g. all48, final36, development12):
--   the mean over tasks of nDCG@5, coverage, redundancy, pair_cosine (over the tasks that have a
--   pair) and objective, and the totals over tasks of the unique agreed obligations gained and lost
--   against dense (gained_vs_dense, lost_vs_dense).
WITH subsets AS (
    SELECT 'all' AS subset, * FROM models.evidence_task_metrics
    UNION ALL
    SELECT split AS subset, * FROM models.evidence_task_metrics
),

sizes AS (
    SELECT subset, count(DISTINCT task_id) AS tasks
    FROM subsets
    GROUP BY subset
),

measures AS (
    SELECT bundle, subset, method, 'nDCG@5' AS measure, avg(ndcg5) AS value FROM subsets GROUP BY bundle, subset, method
    UNION ALL
    SELECT bundle, subset, method, 'coverage', avg(coverage) FROM subsets GROUP BY bundle, subset, method
    UNION ALL
    SELECT bundle, subset, method, 'redundancy', avg(redundancy) FROM subsets GROUP BY bundle, subset, method
    UNION ALL
    SELECT bundle, subset, method, 'pair_cosine', avg(pair_cosine) FROM subsets GROUP BY bundle, subset, method
    UNION ALL
    SELECT bundle, subset, method, 'objective', avg(objective) FROM subsets GROUP BY bundle, subset, method
    UNION ALL
    SELECT bundle, subset, method, 'gained_vs_dense', sum(gained) FROM subsets GROUP BY bundle, subset, method
    UNION ALL
    SELECT bundle, subset, method, 'lost_vs_dense', sum(lost) FROM subsets GROUP BY bundle, subset, method
)

SELECT m.bundle, m.subset || CAST(s.tasks AS VARCHAR) AS subset, m.method, m.measure, m.value, s.tasks
FROM measures AS m
JOIN sizes AS s ON s.subset = m.subset
