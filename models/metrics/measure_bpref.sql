-- name: measure_bpref
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Bpref (Buckley and Voorhees 2004, as trec_eval computes it): over the R relevant
--   documents, the mean of 1 - min(n, R) / min(N, R) for each one retrieved, where n counts the
--   judged non-relevant documents ranked above it and N all judged non-relevant ones; a relevant
--   document with none above it scores 1. Unjudged documents are ignored.
WITH judged AS (
    SELECT
        run_id,
        qid,
        relevant,
        coalesce(sum(CASE WHEN relevant THEN 0 ELSE 1 END) OVER (
            PARTITION BY run_id, qid ORDER BY rank
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS nonrelevant_above
    FROM models.judged_ranking
    WHERE rel >= 0
),

preferences AS (
    SELECT
        j.run_id,
        j.qid,
        CASE
            WHEN j.nonrelevant_above = 0 THEN 1.0
            ELSE 1.0 - least(j.nonrelevant_above, e.num_rel) / least(e.num_judged_nonrel, e.num_rel)
        END AS kept
    FROM judged AS j
    JOIN models.evaluated_queries AS e ON e.run_id = j.run_id AND e.qid = j.qid
    WHERE j.relevant
)

SELECT
    e.run_id,
    e.qid,
    m.measure,
    CASE WHEN e.num_rel > 0 THEN coalesce(sum(p.kept), 0) / e.num_rel ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'Bpref'
LEFT JOIN preferences AS p ON p.run_id = e.run_id AND p.qid = e.qid
GROUP BY e.run_id, e.qid, e.num_rel, m.measure
