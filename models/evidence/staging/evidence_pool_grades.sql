-- name: evidence_pool_grades
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits:
-- parameters: bundle = "evidence_demo"
-- description: Every member of every evidence task's judged pool as a judgment (seed 000's pooled
--   nDCG5): query_key = query_id = the task, query_order = its position in tasks.jsonl, doc_key = the
--   document, grade = the judges' mean grade (0 where nobody judged the pair), whose exponential gain
--   2^grade - 1 is evidence_pair_labels' gain.
SELECT l.task_id AS query_key, l.task_id AS query_id, t.row_index AS query_order, l.doc_id AS doc_key,
    CAST(coalesce(l.mean_grade, 0) AS DOUBLE) AS grade
FROM models.evidence_pair_labels AS l
JOIN models.evidence_tasks AS t ON t.bundle = l.bundle AND t.task_id = l.task_id
WHERE l.bundle = {{ bundle | literal }}
