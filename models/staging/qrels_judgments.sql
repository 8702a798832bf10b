-- name: qrels_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits:
-- description: TREC qrels as judgments of loaded TREC runs: query_key = query_id = qid, doc_key =
--   docno, grade = rel (negative: pooled but not judged); queries in qid order (byte order).
WITH topics AS (
    SELECT qid, row_number() OVER (ORDER BY qid) - 1 AS query_order
    FROM (SELECT DISTINCT qid FROM models.qrels) AS judged
)

SELECT
    q.qid AS query_key,
    q.qid AS query_id,
    t.query_order,
    q.docno AS doc_key,
    CAST(q.rel AS DOUBLE) AS grade
FROM models.qrels AS q
JOIN topics AS t ON t.qid = q.qid
