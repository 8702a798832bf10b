-- name: query_duplicate_counts
-- version: 1
-- stage: prepare
-- grain: corpus
-- audits: not_null(corpus, queries, queries_whose_text_is_a_document, queries_sharing_their_text_with_another_query); unique_grain
-- description: Per corpus, the duplicate counts seed 004 asks to report (query_duplicates): queries,
--   those whose normalised text is a document's, and those whose text another query shares.
SELECT
    corpus,
    count(*) AS queries,
    count(*) FILTER (WHERE in_documents) AS queries_whose_text_is_a_document,
    count(*) FILTER (WHERE copies_in_queries > 0) AS queries_sharing_their_text_with_another_query
FROM models.query_duplicates
GROUP BY corpus
