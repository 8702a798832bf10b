-- name: bm25_terms
-- version: 2
-- stage: prepare
-- grain: corpus, term
-- audits: not_null(corpus, term, df, idf); unique_grain; accepted_range(idf, 0, )
-- description: Per term, its document frequency df and the positive Robertson IDF of seed 004,
--   idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (bm25_idf), from the documents only.
SELECT
    t.corpus,
    t.term,
    count(*) AS df,
    {{ bm25_idf('c.documents', 'count(*)') }} AS idf
FROM models.document_tokens AS t
JOIN models.bm25_collection AS c ON c.corpus = t.corpus
GROUP BY t.corpus, t.term, c.documents
