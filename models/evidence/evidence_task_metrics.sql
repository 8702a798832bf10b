-- name: evidence_task_metrics
-- version: 2
-- stage: evaluate
-- grain: bundle, method, task_id
-- audits: not_null(bundle, method, task_id, split, requirements, covered, coverage, assignments, redundancy, ndcg5, objective, gained, lost); unique_grain
-- description: The evidence study's measures per method and task side by side (per_task.csv): its own
--   (evidence_coverage) and pooled nDCG5 (query_measures' nDCG@5: gain 2^meanGrade - 1, the ideal over
--   the full judged pool).
SELECT
    c.bundle,
    c.method,
    c.task_id,
    c.split,
    c.task_row,
    c.requirements,
    c.covered,
    c.coverage,
    c.assignments,
    c.redundancy,
    q.value AS ndcg5,
    c.pair_cosine,
    c.objective,
    c.gained,
    c.lost
FROM models.evidence_coverage AS c
JOIN models.query_measures AS q ON q.system = c.method AND q.query = c.task_id AND q.measure = 'nDCG@5'
