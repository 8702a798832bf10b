-- name: corpus_qrels_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits: not_null(query_key, doc_key, grade)
-- parameters: corpus = "banking77"
-- description: TREC qrels (e.g. BEIR's) as judgments of a loaded corpus's rankings: the grades above 0
--   of the corpus's queries and documents, keyed by their row numbers (query_key = query_row, doc_key =
--   doc_row; query_id = qid). A judged document that is not in the corpus is left out, as is a query
--   whose every grade is 0 or below (it has no relevant document to find).
SELECT q.query_row AS query_key, q.qid AS query_id, q.query_row AS query_order, d.doc_row AS doc_key,
    CAST(g.rel AS DOUBLE) AS grade
FROM models.qrels AS g
JOIN models.queries AS q ON q.qid = g.qid AND q.corpus = {{ corpus | literal }}
JOIN models.documents AS d ON d.doc_id = g.docno AND d.corpus = {{ corpus | literal }}
WHERE g.rel > 0
