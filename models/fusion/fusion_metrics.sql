-- name: fusion_metrics
-- version: 1
-- stage: evaluate
-- grain: rule, corpus, measure
-- audits: not_null(rule, corpus, measure, value, queries); unique_grain; accepted_range(value, 0, 1)
-- description: Every rule's mean of each measure over the judged queries.
SELECT rule, corpus, 'nDCG@10' AS measure, avg(ndcg10) AS value, count(*) AS queries FROM models.fusion_query_metrics GROUP BY rule, corpus
UNION ALL SELECT rule, corpus, 'R@100', avg(recall100), count(*) FROM models.fusion_query_metrics GROUP BY rule, corpus
UNION ALL SELECT rule, corpus, 'RR@10', avg(rr10), count(*) FROM models.fusion_query_metrics GROUP BY rule, corpus
UNION ALL SELECT rule, corpus, 'RR', avg(rr), count(*) FROM models.fusion_query_metrics GROUP BY rule, corpus
UNION ALL SELECT rule, corpus, 'Top-1', avg(top1), count(*) FROM models.fusion_query_metrics GROUP BY rule, corpus
