-- name: qrels_judgments
-- version: 1
-- stage: evaluate
-- grain: query_key, doc_key
-- audits:
-- materialized: view
-- description: TREC qrels as judgments of loaded TREC runs: query_key = query_id = qid, doc_key =
--   docno, grade = rel (negative: pooled but not judged); queries in qid order (byte order).
SELECT
    qid AS query_key,
    qid AS query_id,
    dense_rank() OVER (ORDER BY qid) - 1 AS query_order,
    docno AS doc_key,
    CAST(rel AS DOUBLE) AS grade
FROM models.qrels
