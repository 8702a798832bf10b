-- name: group_results
-- version: 1
-- stage: evaluate
-- grain: study, system, group_id, measure
-- audits: not_null(study, system, group_id, group_row, measure, value, queries); unique_grain
-- description: E3's per-group results (seed 004): for every system and measure, the mean of the
--   shared per-query values (query_measures) over the group's four paraphrases.
SELECT
    m.study,
    m.system,
    q.group_id,
    q.group_row,
    m.measure,
    {{ mean('m.value') }} AS value,
    count(*) AS queries
FROM models.query_measures AS m
JOIN models.group_queries AS q ON q.item = m.query
GROUP BY m.study, m.system, q.group_id, q.group_row, m.measure
