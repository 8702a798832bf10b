-- name: evidence_set_measures
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, aggregate); unique_grain
-- parameters: study = "eval"
-- description: Seed 000's own per-task measures (evidence_coverage) in the long form of
--   query_measures, so that means and the paired bootstrap treat them like the ranked-list measures:
--   coverage, redundancy, pair_cosine and objective are averaged over tasks; gained_vs_dense and
--   lost_vs_dense (unique agreed obligations against dense) are summed.
SELECT {{ study | literal }} AS study, method AS system, task_id AS query, 'coverage' AS measure, coverage AS value, 'mean' AS aggregate
FROM models.evidence_coverage
UNION ALL
SELECT {{ study | literal }}, method, task_id, 'redundancy', redundancy, 'mean' FROM models.evidence_coverage
UNION ALL
SELECT {{ study | literal }}, method, task_id, 'pair_cosine', pair_cosine, 'mean' FROM models.evidence_coverage
UNION ALL
SELECT {{ study | literal }}, method, task_id, 'objective', objective, 'mean' FROM models.evidence_coverage
UNION ALL
SELECT {{ study | literal }}, method, task_id, 'gained_vs_dense', CAST(gained AS DOUBLE), 'sum' FROM models.evidence_coverage
UNION ALL
SELECT {{ study | literal }}, method, task_id, 'lost_vs_dense', CAST(lost AS DOUBLE), 'sum' FROM models.evidence_coverage
