-- name: class_judgments
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query_key, doc_key
-- audits:
-- parameters: corpus = "banking77"
-- description: Class labels as relevance judgments (seed 004: a training message is relevant to a test
--   query of the same intent), grade 1, for a corpus's rankings keyed by row numbers (query_key =
--   query_row, doc_key = doc_row; query_id = qid).
SELECT q.query_row AS query_key, q.qid AS query_id, q.query_row AS query_order, d.doc_row AS doc_key,
    CAST(1 AS DOUBLE) AS grade
FROM models.query_classes AS qc
JOIN models.document_classes AS dc ON dc.corpus = qc.corpus AND dc.class = qc.class
JOIN models.queries AS q ON q.corpus = qc.corpus AND q.qid = qc.qid
JOIN models.documents AS d ON d.corpus = dc.corpus AND d.doc_id = dc.doc_id
WHERE qc.corpus = {{ corpus | literal }}
