-- name: lane_metrics
-- version: 1
-- stage: evaluate
-- grain: method, corpus, measure
-- audits: not_null(method, corpus, measure, value, queries); unique_grain; accepted_range(value, 0, 1)
-- description: Each ordering's mean of each measure over the judged topics (P@10, R@10, nDCG@10, RR).
SELECT method, corpus, 'P@10' AS measure, avg(p10) AS value, count(*) AS queries FROM models.lane_query_metrics GROUP BY method, corpus
UNION ALL SELECT method, corpus, 'R@10', avg(r10), count(*) FROM models.lane_query_metrics GROUP BY method, corpus
UNION ALL SELECT method, corpus, 'nDCG@10', avg(ndcg10), count(*) FROM models.lane_query_metrics GROUP BY method, corpus
UNION ALL SELECT method, corpus, 'RR', avg(rr), count(*) FROM models.lane_query_metrics GROUP BY method, corpus
