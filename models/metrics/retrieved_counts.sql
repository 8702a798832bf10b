-- name: retrieved_counts
-- version: 1
-- stage: evaluate
-- grain: run_id, qid
-- audits: not_null(run_id, qid, num_ret); unique_grain; accepted_range(num_ret, 1, )
-- parameters: judged_only = false
-- description: Documents retrieved per run and query (trec_eval num_ret): every ranked document, or
--   with judged_only (-J) only those with a grade >= 0 (judged_ranking keeps no others then).
SELECT run_id, qid, count(*) AS num_ret
FROM models.run_ranking
WHERE NOT {{ judged_only | literal }}
GROUP BY run_id, qid

UNION ALL

SELECT run_id, qid, count(*) AS num_ret
FROM models.judged_ranking
WHERE {{ judged_only | literal }}
GROUP BY run_id, qid
