-- name: lane_query_metrics
-- version: 3
-- stage: evaluate
-- grain: method, corpus, topic
-- audits: not_null(method, corpus, topic, relevant, retrieved); unique_grain
-- parameters: corpus = "banking77"
-- description: The lanes study's measures per ordering and judged topic side by side (per_query.csv),
--   from the long form (query_measures; trec_eval's definitions over the ordering's k_t documents):
--   P@10 (relevant in the first 10 / 10, also when k_t < 10), R@10, nDCG@10 (gain = grade, the ideal
--   over every relevant document, retrieved or not) and RR (0 if no relevant document is a
--   candidate); relevant = the topic's relevant documents, retrieved = k_t. A measure the protocol
--   does not ask for (`measures`) is NULL: computed only where asked for, never assumed.
WITH pivoted AS (
    {{ measures_by_query({"p10": "P@10", "r10": "R@10", "ndcg10": "nDCG@10", "rr": "RR"}) | indent(4) }}
),

sizes AS (
    SELECT corpus, topic, max(k) AS k
    FROM models.lane_candidates
    GROUP BY corpus, topic
)

SELECT
    p.system AS method,
    {{ corpus | literal }} AS corpus,
    p.query AS topic,
    e.num_rel AS relevant,
    coalesce(s.k, 0) AS retrieved,
    p.p10,
    p.r10,
    p.ndcg10,
    p.rr
FROM pivoted AS p
JOIN models.evaluated_queries AS e ON e.system = p.system AND e.query = p.query
LEFT JOIN sizes AS s ON s.corpus = {{ corpus | literal }} AND s.topic = p.query
