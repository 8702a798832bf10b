-- name: oracle_summary
-- version: 1
-- stage: evaluate
-- grain: bundle
-- audits: not_null(bundle, subsets_enumerated, tasks_with_ties); unique_grain
-- description: What the diagnostic oracle (evidence_oracle) did per bundle: the subsets it enumerated
--   over all tasks, and the tasks where more than one subset was best on agreed coverage and pooled DCG
--   (so that the third tie level decided).
WITH tasks AS (
    SELECT DISTINCT bundle, task_id, subsets, tied
    FROM models.evidence_oracle
)

SELECT bundle, sum(subsets) AS subsets_enumerated, count(*) FILTER (WHERE tied > 1) AS tasks_with_ties
FROM tasks
GROUP BY bundle
