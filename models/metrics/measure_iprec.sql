-- name: measure_iprec
-- version: 2
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: IPrec@r (trec_eval 10 iprec_at_recall): the highest precision at or below the rank
--   where recall first reaches r, recall r meaning round(r * R) relevant documents (rounded half
--   away from zero, as trec_eval 10's lround; 9.x truncated r * R + 0.9). Precision can only peak
--   at a relevant document, so only those ranks are scanned. 0 if recall r is never reached.
WITH relevant_ranks AS (
    SELECT
        system,
        query,
        rank,
        row_number() OVER (PARTITION BY system, query ORDER BY rank) AS relevant_so_far
    FROM models.judged_ranking
    WHERE relevant
),

interpolated AS (
    SELECT
        system,
        query,
        relevant_so_far,
        max(relevant_so_far / rank) OVER (
            PARTITION BY system, query ORDER BY rank DESC ROWS UNBOUNDED PRECEDING
        ) AS precision
    FROM relevant_ranks
),

levels AS (
    SELECT e.study, e.system, e.query, m.measure, round(m.cutoff * e.num_rel) AS relevant_needed
    FROM models.evaluated_queries AS e
    JOIN models.measure_requests AS m ON m.family = 'IPrec'
)

SELECT l.study, l.system, l.query, l.measure, coalesce(i.precision, 0) AS value
FROM levels AS l
LEFT JOIN interpolated AS i
    ON i.system = l.system AND i.query = l.query AND i.relevant_so_far = greatest(l.relevant_needed, 1)
