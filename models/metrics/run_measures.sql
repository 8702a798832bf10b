-- name: run_measures
-- version: 1
-- stage: evaluate
-- grain: run_id, measure
-- audits: not_null(run_id, measure, value, num_q); unique_grain; at_least_one_row
-- description: Every requested measure of every run over its evaluated queries (trec_eval's `all`
--   rows): the mean, except NumRet/NumRel/NumRelRet (sums), GMAP (geometric mean of AP, each
--   floored at 1e-5 as trec_eval does) and NumQ (the number of evaluated queries).
WITH aggregated AS (
    SELECT
        q.run_id,
        q.measure,
        CASE
            WHEN m.family IN ('NumRet', 'NumRel', 'NumRelRet') THEN sum(q.value)
            WHEN m.family = 'GMAP' THEN exp(avg(ln(greatest(q.value, 1e-5))))
            ELSE avg(q.value)
        END AS value,
        count(*) AS num_q
    FROM models.query_measures AS q
    JOIN models.measure_requests AS m ON m.measure = q.measure
    GROUP BY q.run_id, q.measure, m.family
),

query_counts AS (
    SELECT e.run_id, m.measure, CAST(count(*) AS DOUBLE) AS value, count(*) AS num_q
    FROM models.evaluated_queries AS e
    JOIN models.measure_requests AS m ON m.family = 'NumQ'
    GROUP BY e.run_id, m.measure
)

SELECT * FROM aggregated
UNION ALL
SELECT * FROM query_counts
