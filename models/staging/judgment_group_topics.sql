-- name: judgment_group_topics
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits:
-- description: Qrels with judgment groups as judgments of whole topics, so that the queries evaluated
--   (evaluated_queries, query_subsets, NumQ) are the topics: query_key = query_id = qid, doc_key = docno,
--   grade the highest rel any group gave the document; queries in qid order (byte order). The measures of
--   judgment groups read each group's own (judgment_group_judgments, measure_avgjg).
WITH topics AS (
    SELECT qid, row_number() OVER (ORDER BY qid) - 1 AS query_order
    FROM (SELECT DISTINCT qid FROM models.qrels_jg) AS judged
)

SELECT q.qid AS query_key, q.qid AS query_id, t.query_order, q.docno AS doc_key, CAST(max(q.rel) AS DOUBLE) AS grade
FROM models.qrels_jg AS q
JOIN topics AS t ON t.qid = q.qid
GROUP BY q.qid, t.query_order, q.docno
