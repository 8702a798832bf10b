-- name: query_duplicates
-- version: 2
-- stage: prepare
-- grain: corpus, query_row
-- audits: not_null(corpus, query_row, qid, in_documents, copies_in_queries); unique_grain
-- description: Per query, whether its text, lowercased and with runs of whitespace made one space,
--   occurs among the documents (a test message seen in training), and how many other queries have
--   the same text (seed 004: report metrics with and without the former; count both).
WITH normalised_queries AS (
    SELECT corpus, query_row, qid, trim(regexp_replace(lower(text), '\s+', ' ', 'g')) AS text
    FROM models.queries
),

normalised_documents AS (
    SELECT DISTINCT corpus, trim(regexp_replace(lower(text), '\s+', ' ', 'g')) AS text
    FROM models.documents
)

SELECT
    q.corpus,
    q.query_row,
    q.qid,
    d.text IS NOT NULL AS in_documents,
    count(*) OVER (PARTITION BY q.corpus, q.text) - 1 AS copies_in_queries
FROM normalised_queries AS q
LEFT JOIN normalised_documents AS d ON d.corpus = q.corpus AND d.text = q.text
