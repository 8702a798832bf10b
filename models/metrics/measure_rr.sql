-- name: measure_rr
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: RR (trec_eval recip_rank): 1 / rank of the first relevant document, 0 if none was
--   retrieved; RR@k counts only the first k documents.
SELECT
    e.run_id,
    e.qid,
    m.measure,
    coalesce(1.0 / min(j.rank), 0) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'RR'
LEFT JOIN models.judged_ranking AS j
    ON j.run_id = e.run_id AND j.qid = e.qid AND j.relevant
    AND (m.cutoff IS NULL OR j.rank <= m.cutoff)
GROUP BY e.run_id, e.qid, m.measure
