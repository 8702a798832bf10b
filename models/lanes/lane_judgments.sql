-- name: lane_judgments
-- version: 1
-- stage: evaluate
-- grain: corpus, topic, doc_id
-- audits: not_null(corpus, topic, doc_id, gain); unique_grain; accepted_range(gain, 1, )
-- parameters: corpus = "banking77"
-- description: The relevant documents of each topic, read through the gate: a document whose class is
--   one of the topic's classes (BANKING77: a training message whose intent is one of the group's
--   intents; label-derived proxy relevance, gain 1), or qrels with a grade above 0 (qid = topic).
WITH topics AS (
    SELECT DISTINCT corpus, topic
    FROM raw.lane_units
    WHERE corpus = {{ corpus | literal }}
)

SELECT t.corpus, t.topic, d.doc_id, 1 AS gain
FROM gate.topic_classes AS t
JOIN gate.document_classes AS d ON d.corpus = t.corpus AND d.class = t.class
WHERE t.corpus = {{ corpus | literal }}

UNION ALL

SELECT t.corpus, t.topic, g.docno AS doc_id, g.rel AS gain
FROM gate.qrels AS g
JOIN topics AS t ON t.topic = g.qid
WHERE g.rel > 0
