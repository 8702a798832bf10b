-- name: fusion_query_metrics
-- version: 1
-- stage: evaluate
-- grain: rule, corpus, query_row
-- audits: not_null(rule, corpus, query_row, ndcg10, recall100, rr10, rr, top1); unique_grain; accepted_range(ndcg10, 0, 1); accepted_range(recall100, 0, 1)
-- description: Per rule and judged query, over the rule's ranking of the candidate union: nDCG@10
--   (trec_eval's: gain = grade, ideal over every relevant document of the query, retrieved or not),
--   R@100, RR@10, RR (0 when no relevant document is among the candidates) and Top-1.
WITH judged AS (
    SELECT corpus, query_row, count(*) AS relevant
    FROM models.fusion_judgments
    GROUP BY corpus, query_row
),

ideal AS (
    SELECT corpus, query_row, sum(gain / log2(position + 1)) AS idcg10
    FROM (
        SELECT corpus, query_row, gain, row_number() OVER (PARTITION BY corpus, query_row ORDER BY gain DESC, doc_row) AS position
        FROM models.fusion_judgments
    ) AS ordered
    WHERE position <= 10
    GROUP BY corpus, query_row
),

hits AS (
    SELECT r.rule, r.corpus, r.query_row, r.rank, j.gain
    FROM models.fused_rankings AS r
    JOIN models.fusion_judgments AS j ON j.corpus = r.corpus AND j.query_row = r.query_row AND j.doc_row = r.doc_row
),

per_rule AS (
    SELECT
        rule,
        corpus,
        query_row,
        sum(CASE WHEN rank <= 10 THEN gain / log2(rank + 1) ELSE 0 END) AS dcg10,
        count(*) FILTER (WHERE rank <= 100) AS relevant_in_100,
        min(rank) AS first_relevant
    FROM hits
    GROUP BY rule, corpus, query_row
),

evaluated AS (
    SELECT r.rule, j.corpus, j.query_row
    FROM (SELECT DISTINCT rule FROM models.fused_rankings) AS r
    CROSS JOIN judged AS j
)

SELECT
    e.rule,
    e.corpus,
    e.query_row,
    coalesce(p.dcg10, 0) / i.idcg10 AS ndcg10,
    coalesce(p.relevant_in_100, 0) / j.relevant AS recall100,
    CASE WHEN p.first_relevant <= 10 THEN 1 / p.first_relevant ELSE 0 END AS rr10,
    coalesce(1 / p.first_relevant, 0) AS rr,
    CASE WHEN p.first_relevant = 1 THEN 1 ELSE 0 END AS top1
FROM evaluated AS e
JOIN judged AS j ON j.corpus = e.corpus AND j.query_row = e.query_row
JOIN ideal AS i ON i.corpus = e.corpus AND i.query_row = e.query_row
LEFT JOIN per_rule AS p ON p.rule = e.rule AND p.corpus = e.corpus AND p.query_row = e.query_row
