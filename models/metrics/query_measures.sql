-- name: query_measures
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, measure
-- audits: not_null(run_id, qid, measure, value); unique_grain; at_least_one_row
-- description: Every requested measure of every run on every evaluated query (trec_eval -q).
SELECT * FROM models.measure_counts
UNION ALL SELECT * FROM models.measure_precision
UNION ALL SELECT * FROM models.measure_recall
UNION ALL SELECT * FROM models.measure_success
UNION ALL SELECT * FROM models.measure_rr
UNION ALL SELECT * FROM models.measure_rprec
UNION ALL SELECT * FROM models.measure_ap
UNION ALL SELECT * FROM models.measure_bpref
UNION ALL SELECT * FROM models.measure_ndcg
UNION ALL SELECT * FROM models.measure_iprec
