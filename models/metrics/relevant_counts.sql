-- name: relevant_counts
-- version: 1
-- stage: evaluate
-- grain: study, query, measure
-- audits: not_null(study, query, measure, num_rel); unique_grain
-- description: For each requested recall or AP with its own relevance level (ir_measures' rel, e.g.
--   R(rel=2)@100, AP(rel=2)): the judged documents of each query with a grade >= rel, the relevant
--   documents that measure divides by (evaluated_queries.num_rel counts them at relevance_level, for
--   every other measure).
SELECT
    j.study,
    j.query_id AS query,
    m.measure,
    count(*) FILTER (WHERE j.grade >= m.rel) AS num_rel
FROM models.judgments AS j
JOIN models.measure_requests AS m ON m.family IN ('R', 'AP') AND m.rel IS NOT NULL
GROUP BY j.study, j.query_id, m.measure
