-- name: judgment_group_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_id, doc_key
-- audits:
-- description: Qrels with judgment groups as judgments of loaded TREC runs, one query per topic and group:
--   query_key = qid (it joins the runs), query_id = qid, a space and the group (a field holds no blank, so
--   the two read back), doc_key = docno, grade = rel; in (qid, jg) order. The part `judgment_groups` of
--   `rankhouse eval -R qrels_jg` (judgments' part_judgments), whose per-query values measure_avgjg
--   averages over each topic's groups.
WITH groups AS (
    SELECT qid, jg, row_number() OVER (ORDER BY qid, jg) - 1 AS query_order
    FROM (SELECT DISTINCT qid, jg FROM models.qrels_jg) AS judged
)

SELECT
    q.qid AS query_key,
    q.qid || ' ' || q.jg AS query_id,
    g.query_order,
    q.docno AS doc_key,
    CAST(q.rel AS DOUBLE) AS grade
FROM models.qrels_jg AS q
JOIN groups AS g ON g.qid = q.qid AND g.jg = q.jg
