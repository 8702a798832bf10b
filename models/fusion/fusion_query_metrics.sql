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
    {{ measures_by_query({"ndcg10": "nDCG@10", "recall100": "R@100", "rr10": "RR@10", "rr": "RR", "top1": "Top-1"}) | indent(4) }}
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
