-- name: fusion_query_metrics
-- version: 2
-- stage: evaluate
-- grain: rule, corpus, query_row
-- audits: not_null(rule, corpus, query_row, ndcg10, recall100, rr10, rr, top1); unique_grain
-- parameters: corpus = "banking77"
-- description: The fusion study's measures per rule and judged query side by side (per_query.csv),
--   from the long form (query_measures), over each rule's ranking of the candidate union: nDCG@10
--   (trec_eval's: gain = grade, ideal over every relevant document of the query, retrieved or not),
--   R@100, RR@10, RR (0 when no relevant document is among the candidates) and Top-1 (P@1).
WITH pivoted AS (
    SELECT
        system,
        query,
        max(CASE WHEN measure = 'nDCG@10' THEN value END) AS ndcg10,
        max(CASE WHEN measure = 'R@100' THEN value END) AS recall100,
        max(CASE WHEN measure = 'RR@10' THEN value END) AS rr10,
        max(CASE WHEN measure = 'RR' THEN value END) AS rr,
        max(CASE WHEN measure = 'Top-1' THEN value END) AS top1
    FROM models.query_measures
    GROUP BY system, query
)

SELECT
    p.system AS rule,
    q.corpus,
    q.query_row,
    p.ndcg10,
    p.recall100,
    p.rr10,
    p.rr,
    CAST(p.top1 AS INTEGER) AS top1
FROM pivoted AS p
JOIN models.queries AS q ON q.corpus = {{ corpus | literal }} AND q.qid = p.query
