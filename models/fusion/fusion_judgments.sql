-- name: fusion_judgments
-- version: 1
-- stage: evaluate
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, gain); unique_grain; accepted_range(gain, 1, )
-- parameters: corpus = "banking77"
-- description: The relevant documents of each query with their gain, from whichever labels the study
--   has: qrels grades above 0 (SciFact), or a shared class (BANKING77, gain 1). Read through the gate.
SELECT q.corpus, q.row_index AS query_row, d.row_index AS doc_row, g.rel AS gain
FROM gate.qrels AS g
JOIN raw.queries AS q ON q.qid = g.qid AND q.corpus = {{ corpus | literal }}
JOIN raw.documents AS d ON d.doc_id = g.docno AND d.corpus = {{ corpus | literal }}
WHERE g.rel > 0

UNION ALL

SELECT corpus, query_row, doc_row, 1 AS gain
FROM models.class_relevance
WHERE corpus = {{ corpus | literal }}
