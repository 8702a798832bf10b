-- name: feature_top_documents
-- version: 1
-- stage: prepare
-- grain: method, corpus, query_row
-- audits: not_null(method, corpus, query_row, qid, doc_row, doc_id, score); unique_grain; at_least_one_row
-- description: Each E2 method's first document for every query (rank 1 of feature_rankings): the
--   label-free prediction that per_query.csv and the confusion summary (feature_confusions) read,
--   frozen with the study.
SELECT r.system AS method, r.corpus, r.query_key AS query_row, q.qid, r.doc_key AS doc_row, d.doc_id, r.score
FROM models.feature_rankings AS r
JOIN models.queries AS q ON q.corpus = r.corpus AND q.query_row = r.query_key
JOIN models.documents AS d ON d.corpus = r.corpus AND d.doc_row = r.doc_key
WHERE r.rank = 1
