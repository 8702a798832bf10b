-- name: fusion_ndcg_deltas
-- version: 1
-- stage: evaluate
-- grain: rule, corpus, query_row
-- audits: not_null(rule, corpus, query_row, delta); unique_grain; accepted_range(delta, -1, 1)
-- description: Per rule and judged query, the exact nDCG@10 change against the dense arm (seed 003,
--   eq. 20): sum over relevant d of G_d [w(r_rule(d)) - w(r_dense(d))] / IDCG, w(r) = 1{r <= 10} /
--   log_2(r + 1); the same number as the difference of the two rules' nDCG@10 (measure_ndcg).
SELECT r.rule, r.corpus, r.query_row, r.ndcg10 - d.ndcg10 AS delta
FROM models.fusion_query_metrics AS r
JOIN models.fusion_query_metrics AS d ON d.rule = 'dense' AND d.corpus = r.corpus AND d.query_row = r.query_row
WHERE r.rule <> 'dense'
