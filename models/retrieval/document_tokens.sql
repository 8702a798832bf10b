-- name: document_tokens
-- version: 2
-- stage: prepare
-- grain: corpus, doc_row, term
-- audits: not_null(corpus, doc_row, term, tf, length); unique_grain; accepted_range(tf, 1, )
-- description: Every document's terms with their frequency, and the document's length in terms;
--   documents by their row index (doc_row). Terms are lowercase Unicode letter/number runs: no
--   stemming, no stop words (seed 004, BM25; the terms macro).
WITH tokens AS (
    SELECT corpus, doc_row, unnest({{ terms('text') }}) AS term
    FROM models.documents
),

lengths AS (
    SELECT corpus, doc_row, count(*) AS length
    FROM tokens
    GROUP BY corpus, doc_row
)

SELECT t.corpus, t.doc_row, t.term, count(*) AS tf, l.length
FROM tokens AS t
JOIN lengths AS l ON l.corpus = t.corpus AND l.doc_row = t.doc_row
GROUP BY t.corpus, t.doc_row, t.term, l.length
