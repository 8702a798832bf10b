-- name: group_means
-- version: 1
-- stage: evaluate
-- grain: study, system, subset, measure
-- audits: not_null(study, system, subset, measure, value, groups, queries); unique_grain
-- parameters: macro_measures = [], query_groups = "query_intents"
-- description: Macro averages (seed 004: macro Top-1 across intents): for each measure the parameter
--   `macro_measures` names, the mean over query groups of each group's mean, reported as
--   `macro-<measure>`; the groups come from the model `query_groups` names (columns query,
--   query_group), queries counts the queries in the groups.
WITH group_values AS (
    SELECT q.study, q.system, s.subset, q.measure, g.query_group, {{ mean('q.value') }} AS value,
        count(*) AS queries
    FROM models.query_measures AS q
    JOIN models.query_subsets AS s ON s.study = q.study AND s.query = q.query
    JOIN models.{{ query_groups | identifier }} AS g ON g.query = q.query
    WHERE q.measure IN {{ macro_measures | literal }}
    GROUP BY q.study, q.system, s.subset, q.measure, g.query_group
)

SELECT
    study,
    system,
    subset,
    'macro-' || measure AS measure,
    {{ mean('value') }} AS value,
    count(*) AS groups,
    sum(queries) AS queries
FROM group_values
GROUP BY study, system, subset, measure
