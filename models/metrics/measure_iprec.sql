-- name: measure_iprec
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: IPrec@r (trec_eval 10 iprec_at_recall): the highest precision at or below the rank
--   where recall first reaches r, recall r meaning round(r * R) relevant documents (rounded half
--   away from zero, as trec_eval 10's lround; 9.x truncated r * R + 0.9). Precision can only peak
--   at a relevant document, so only those ranks are scanned. 0 if recall r is never reached.
--   11pt_avg (trec_eval 11pt_avg): the mean of IPrec over its recall levels (measure_parameters;
--   0.0, 0.1, ..., 1.0 by default, the 11 points; 11pt_avg(levels=[0.2,0.5,0.8]) the 3-point average).
WITH interpolated AS (
    SELECT
        system,
        query,
        relevant_so_far,
        max(relevant_so_far / rank) OVER (
            PARTITION BY system, query ORDER BY rank DESC ROWS UNBOUNDED PRECEDING
        ) AS precision
    FROM models.relevant_ranks
),

recall_levels AS (
    SELECT m.measure, m.family, m.cutoff AS level
    FROM models.measure_requests AS m
    WHERE m.family = 'IPrec'
    UNION ALL
    SELECT m.measure, m.family, p.value AS level
    FROM models.measure_requests AS m
    JOIN models.measure_parameters AS p ON p.measure = m.measure AND p.name = 'level'
    WHERE m.family = '11pt_avg'
),

levels AS (
    SELECT e.study, e.system, e.query, r.measure, r.family, round(r.level * e.num_rel) AS relevant_needed
    FROM models.evaluated_queries AS e
    CROSS JOIN recall_levels AS r
),

precisions AS (
    SELECT l.study, l.system, l.query, l.measure, l.family, coalesce(i.precision, 0) AS precision
    FROM levels AS l
    LEFT JOIN interpolated AS i
        ON i.system = l.system AND i.query = l.query AND i.relevant_so_far = greatest(l.relevant_needed, 1)
)

SELECT
    study,
    system,
    query,
    measure,
    CASE WHEN family = 'IPrec' THEN max(precision) ELSE {{ exact_sum('precision') }} / count(*) END AS value
FROM precisions
GROUP BY study, system, query, measure, family
