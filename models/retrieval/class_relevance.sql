-- name: class_relevance
-- version: 1
-- stage: evaluate
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row); unique_grain
-- description: Class labels used as relevance judgments: a document is relevant to a query of the
--   same class (for BANKING77, the same intent). Read through the gate only.
SELECT q.corpus, qr.row_index AS query_row, dr.row_index AS doc_row
FROM gate.query_classes AS q
JOIN gate.document_classes AS d ON d.corpus = q.corpus AND d.class = q.class
JOIN raw.queries AS qr ON qr.corpus = q.corpus AND qr.qid = q.qid
JOIN raw.documents AS dr ON dr.corpus = d.corpus AND dr.doc_id = d.doc_id
