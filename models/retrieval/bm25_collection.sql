-- name: bm25_collection
-- version: 2
-- stage: prepare
-- grain: corpus
-- audits: not_null(corpus, documents, average_length); unique_grain; accepted_range(documents, 1, )
-- description: Per corpus, the number of documents N and their average length in terms (a document
--   without any term counts, with length 0); from the documents only, never the queries.
WITH lengths AS (
    SELECT DISTINCT corpus, doc_row, length
    FROM models.document_tokens
)

SELECT d.corpus, count(*) AS documents, sum(coalesce(l.length, 0)) / count(*) AS average_length
FROM models.documents AS d
LEFT JOIN lengths AS l ON l.corpus = d.corpus AND l.doc_row = d.doc_row
GROUP BY d.corpus
