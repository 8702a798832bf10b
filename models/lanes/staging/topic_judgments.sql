-- name: topic_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits: not_null(query_key, query_id, query_order, doc_key, grade); unique_grain
-- parameters: corpus = "banking77"
-- description: The relevant documents of each lanes topic, keyed by topic and document id (query_key =
--   query_id = the topic, query_order = its position in the narratives file): a document whose class
--   is one of the topic's classes (BANKING77: a training message whose intent is one of the group's
--   intents; label-derived proxy relevance, grade 1), or qrels with a grade above 0 (qid = topic).
WITH topics AS (
    SELECT corpus, topic, min(topic_row) AS topic_row
    FROM models.lane_units
    WHERE corpus = {{ corpus | literal }}
    GROUP BY corpus, topic
)

SELECT t.topic AS query_key, t.topic AS query_id, t.topic_row AS query_order, d.doc_id AS doc_key,
    CAST(1 AS DOUBLE) AS grade
FROM models.topic_classes AS c
JOIN models.document_classes AS d ON d.corpus = c.corpus AND d.class = c.class
JOIN topics AS t ON t.corpus = c.corpus AND t.topic = c.topic

UNION ALL

SELECT t.topic AS query_key, t.topic AS query_id, t.topic_row AS query_order, g.docno AS doc_key,
    CAST(g.rel AS DOUBLE) AS grade
FROM models.qrels AS g
JOIN topics AS t ON t.topic = g.qid
WHERE g.rel > 0
