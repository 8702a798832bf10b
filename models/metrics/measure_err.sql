-- name: measure_err
-- version: 2
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- parameters: err_max_grade = 4
-- description: ERR (Chapelle, Metzler, Zhang and Grinspan 2009, "Expected reciprocal rank for graded
--   relevance"): a user reads down the ranking and stops at rank r with probability R(g_r) = (2^g_r -
--   1) / 2^g_max, g_max the scale's highest grade; ERR is the expected reciprocal rank of the stop,
--   sum over r of R(g_r) / r * prod over i < r of (1 - R(g_i)); ERR@k over the first k documents.
--   Grades <= 0 and unjudged documents stop no one. g_max is err_max_grade, 4 as in gdeval (which
--   ir_measures computes ERR with, and which refuses qrels with a higher grade); a query with a ranked
--   grade above it has no value (NULL, refused by the not_null audit; `rankhouse eval` refuses such
--   qrels before any model is built). The product is the exp of a sum of logs (each 1 - R > 0).
WITH stops AS (
    SELECT
        j.system,
        j.query,
        m.measure,
        j.rank,
        (pow(2, j.grade) - 1) / pow(2, {{ err_max_grade }}) AS stop,
        j.grade > {{ err_max_grade }} AS above_scale
    FROM models.judged_ranking AS j
    JOIN models.measure_requests AS m
        ON m.family = 'ERR' AND (m.cutoff IS NULL OR j.rank <= m.cutoff)
    WHERE j.grade > 0
),

cascade AS (
    SELECT
        system,
        query,
        measure,
        rank,
        stop,
        above_scale,
        coalesce(sum(CASE WHEN above_scale THEN 0 ELSE ln(1 - stop) END) OVER (
            PARTITION BY system, query, measure ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS log_reached
    FROM stops
),

err AS (
    SELECT
        system,
        query,
        measure,
        {{ exact_sum('CASE WHEN above_scale THEN 0 ELSE stop / rank * exp(log_reached) END') }} AS err,
        bool_or(above_scale) AS above_scale
    FROM cascade
    GROUP BY system, query, measure
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN r.above_scale THEN NULL ELSE coalesce(r.err, 0) END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'ERR'
LEFT JOIN err AS r ON r.system = e.system AND r.query = e.query AND r.measure = m.measure
