-- name: run_measures
-- version: 3
-- stage: evaluate
-- grain: study, system, subset, measure
-- audits: not_null(study, system, subset, measure, queries); unique_grain; at_least_one_row
-- parameters: zscores = false
-- description: Every requested measure of every system over each set of its evaluated queries
--   (query_subsets; `all` is trec_eval's `all` row): the mean of the per-query values, or their sum
--   (NumRet, NumRel, NumRelRet, NumQ) or, for GMAP, their geometric mean with each value floored at
--   1e-5 as trec_eval does, as the measure's aggregate says; means are exact (the mean macro), so they do
--   not depend on the order of addition. queries counts the queries, including
--   any whose value is undefined (NULL, left out of the mean). With `zscores` (trec_eval -Z) it combines the
--   z-scores of the values (query_zscores) instead.
SELECT
    q.study,
    q.system,
    s.subset,
    q.measure,
    CASE q.aggregate
        WHEN 'sum' THEN sum(q.value)
        WHEN 'geometric' THEN exp({{ mean('ln(greatest(q.value, 1e-5))') }})
        ELSE {{ mean('q.value') }}
    END AS value,
    count(*) AS queries
FROM models.{{ "query_zscores" if zscores else "query_measures" }} AS q
JOIN models.query_subsets AS s ON s.study = q.study AND s.query = q.query
GROUP BY q.study, q.system, s.subset, q.measure, q.aggregate
