-- name: lane_query_metrics
-- version: 1
-- stage: evaluate
-- grain: method, corpus, topic
-- audits: not_null(method, corpus, topic, relevant, retrieved, p10, r10, ndcg10, rr); unique_grain; accepted_range(p10, 0, 1); accepted_range(r10, 0, 1); accepted_range(ndcg10, 0, 1); accepted_range(rr, 0, 1)
-- description: Per ordering and judged topic (trec_eval's definitions over the ordering's k_t documents):
--   P@10 = relevant in the first 10 / 10 (also when k_t < 10); R@10 = relevant in the first 10 / all
--   relevant of the topic; nDCG@10 with gain = grade and the ideal over every relevant document,
--   retrieved or not; RR = 1 / rank of the first relevant document (0 if none is a candidate).
WITH judged AS (
    SELECT corpus, topic, count(*) AS relevant
    FROM models.lane_judgments
    GROUP BY corpus, topic
),

ideal AS (
    SELECT corpus, topic, sum(gain / log2(position + 1)) AS idcg10
    FROM (
        SELECT corpus, topic, gain, row_number() OVER (PARTITION BY corpus, topic ORDER BY gain DESC, doc_id) AS position
        FROM models.lane_judgments
    ) AS ordered
    WHERE position <= 10
    GROUP BY corpus, topic
),

hits AS (
    SELECT o.method, o.corpus, o.topic, o.rank, j.gain
    FROM models.lane_orderings AS o
    JOIN models.lane_judgments AS j ON j.corpus = o.corpus AND j.topic = o.topic AND j.doc_id = o.doc_id
),

per_method AS (
    SELECT
        method,
        corpus,
        topic,
        sum(CASE WHEN rank <= 10 THEN gain / log2(rank + 1) ELSE 0 END) AS dcg10,
        count(*) FILTER (WHERE rank <= 10) AS relevant_in_10,
        min(rank) AS first_relevant
    FROM hits
    GROUP BY method, corpus, topic
),

methods AS (
    SELECT 'combo' AS method
    UNION ALL
    SELECT 'breadth' AS method
    UNION ALL
    SELECT 'narrative' AS method
),

sizes AS (
    SELECT corpus, topic, max(k) AS k
    FROM models.lane_candidates
    GROUP BY corpus, topic
)

SELECT
    m.method,
    j.corpus,
    j.topic,
    j.relevant,
    coalesce(s.k, 0) AS retrieved,
    coalesce(p.relevant_in_10, 0) / 10 AS p10,
    coalesce(p.relevant_in_10, 0) / j.relevant AS r10,
    coalesce(p.dcg10, 0) / i.idcg10 AS ndcg10,
    coalesce(1 / p.first_relevant, 0) AS rr
FROM methods AS m
CROSS JOIN judged AS j
JOIN ideal AS i ON i.corpus = j.corpus AND i.topic = j.topic
LEFT JOIN sizes AS s ON s.corpus = j.corpus AND s.topic = j.topic
LEFT JOIN per_method AS p ON p.method = m.method AND p.corpus = j.corpus AND p.topic = j.topic
