-- name: evidence_pair_labels
-- version: 2
-- stage: evaluate
-- holds: labels
-- grain: bundle, task_id, doc_id
-- audits: not_null(bundle, task_id, doc_id, judges, gain); unique_grain; accepted_range(gain, 0, 7)
-- parameters: bundle = "evidence_demo"
-- description: Every pooled pair's grades, read through the gate: judge A's and B's grade, their mean
--   over the judges who judged the pair, and the gain 2^meanGrade - 1 of seed 000's pooled nDCG5. A
--   pair nobody judged has no mean grade and gain 0.
WITH grades AS (
    SELECT
        task_id,
        doc_id,
        count(*) AS judges,
        avg(grade) AS mean_grade,
        max(CASE WHEN judge = 'A' THEN grade END) AS grade_a,
        max(CASE WHEN judge = 'B' THEN grade END) AS grade_b
    FROM models.evidence_judgments
    WHERE bundle = {{ bundle | literal }}
    GROUP BY task_id, doc_id
)

SELECT
    p.bundle,
    p.task_id,
    p.doc_id,
    g.grade_a,
    g.grade_b,
    coalesce(g.judges, 0) AS judges,
    g.mean_grade,
    pow(2, coalesce(g.mean_grade, 0)) - 1 AS gain
FROM models.evidence_pools AS p
LEFT JOIN grades AS g ON g.task_id = p.task_id AND g.doc_id = p.doc_id
WHERE p.bundle = {{ bundle | literal }}
