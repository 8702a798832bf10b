-- name: retrieval_query_metrics
-- version: 1
-- stage: evaluate
-- grain: method, corpus, query_row
-- audits: not_null(method, corpus, query_row, qid, class, relevant, top1, hit5, recall5, rr, ndcg10, p5); unique_grain; accepted_range(ndcg10, 0, 1); accepted_range(recall5, 0, 1)
-- description: Per method and query (seed 004): top1 = the first document is relevant (P@1); hit5 =
--   a relevant document in the first five (not recall); recall5 = relevant documents in the first
--   five over all relevant documents (true Recall@5); rr = 1 / rank of the first relevant document
--   in the full ranking; ndcg10 = binary nDCG@10; p5 = relevant in the first five / 5.
WITH judged AS (
    SELECT corpus, query_row, count(*) AS relevant
    FROM models.class_relevance
    GROUP BY corpus, query_row
),

ranks AS (
    SELECT
        method,
        corpus,
        query_row,
        min(rank) AS first_relevant,
        count(*) FILTER (WHERE rank <= 5) AS relevant_in_5,
        sum(CASE WHEN rank <= 10 THEN 1 / log2(rank + 1) ELSE 0 END) AS dcg10
    FROM models.relevant_ranks
    GROUP BY method, corpus, query_row
),

ideal AS (
    SELECT j.corpus, j.query_row, sum(1 / log2(c.position + 1)) AS idcg10
    FROM judged AS j
    JOIN (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)) AS c (position) ON c.position <= j.relevant
    GROUP BY j.corpus, j.query_row
),

evaluated AS (
    SELECT m.method, q.corpus, q.row_index AS query_row, q.qid, c.class
    FROM (SELECT DISTINCT method FROM models.relevant_ranks) AS m
    CROSS JOIN raw.queries AS q
    JOIN gate.query_classes AS c ON c.corpus = q.corpus AND c.qid = q.qid
)

SELECT
    e.method,
    e.corpus,
    e.query_row,
    e.qid,
    e.class,
    coalesce(j.relevant, 0) AS relevant,
    CASE WHEN r.first_relevant = 1 THEN 1 ELSE 0 END AS top1,
    CASE WHEN r.first_relevant <= 5 THEN 1 ELSE 0 END AS hit5,
    CASE WHEN j.relevant > 0 THEN coalesce(r.relevant_in_5, 0) / j.relevant ELSE 0 END AS recall5,
    coalesce(1 / r.first_relevant, 0) AS rr,
    CASE WHEN i.idcg10 > 0 THEN coalesce(r.dcg10, 0) / i.idcg10 ELSE 0 END AS ndcg10,
    coalesce(r.relevant_in_5, 0) / 5 AS p5
FROM evaluated AS e
LEFT JOIN judged AS j ON j.corpus = e.corpus AND j.query_row = e.query_row
LEFT JOIN ranks AS r ON r.method = e.method AND r.corpus = e.corpus AND r.query_row = e.query_row
LEFT JOIN ideal AS i ON i.corpus = e.corpus AND i.query_row = e.query_row
