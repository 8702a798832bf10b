-- name: prefs_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits:
-- description: Preference judgments as judgments of loaded TREC runs, so that the queries evaluated
--   (evaluated_queries, query_subsets, NumQ) are the queries with preferences: query_key = query_id = qid,
--   doc_key = docno, grade the highest rel_level any group gave the document (the preference measures read
--   the preferences themselves, models/metrics/preference_pairs.sql); queries in qid order (byte order).
WITH topics AS (
    SELECT qid, row_number() OVER (ORDER BY qid) - 1 AS query_order
    FROM (SELECT DISTINCT qid FROM models.prefs) AS judged
)

SELECT p.qid AS query_key, p.qid AS query_id, t.query_order, p.docno AS doc_key, max(p.rel_level) AS grade
FROM models.prefs AS p
JOIN topics AS t ON t.qid = p.qid
GROUP BY p.qid, t.query_order, p.docno
