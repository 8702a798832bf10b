-- name: measure_iprec
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: IPrec@r (trec_eval 10 iprec_at_recall): the highest precision at or below the rank
--   where recall first reaches r, recall r meaning round(r * R) relevant documents (rounded half
--   away from zero, as trec_eval 10's lround; 9.x truncated r * R + 0.9). Precision can only peak
--   at a relevant document, so only those ranks are scanned. 0 if recall r is never reached.
WITH relevant_ranks AS (
    SELECT
        run_id,
        qid,
        rank,
        row_number() OVER (PARTITION BY run_id, qid ORDER BY rank) AS relevant_so_far
    FROM models.judged_ranking
    WHERE relevant
),

interpolated AS (
    SELECT
        run_id,
        qid,
        relevant_so_far,
        max(relevant_so_far / rank) OVER (
            PARTITION BY run_id, qid ORDER BY rank DESC ROWS UNBOUNDED PRECEDING
        ) AS precision
    FROM relevant_ranks
),

levels AS (
    SELECT e.run_id, e.qid, m.measure, round(m.cutoff * e.num_rel) AS relevant_needed
    FROM models.evaluated_queries AS e
    JOIN models.measure_requests AS m ON m.family = 'IPrec'
)

SELECT l.run_id, l.qid, l.measure, coalesce(i.precision, 0) AS value
FROM levels AS l
LEFT JOIN interpolated AS i
    ON i.run_id = l.run_id AND i.qid = l.qid AND i.relevant_so_far = greatest(l.relevant_needed, 1)
