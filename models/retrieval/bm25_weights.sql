-- name: bm25_weights
-- version: 2
-- stage: prepare
-- grain: corpus, term, doc_row
-- audits: not_null(corpus, term, doc_row, weight_units); unique_grain; accepted_range(weight_units, 0, )
-- parameters: k1 = 1.2, b = 0.75
-- description: What each term of a document adds to the BM25 score of a query that contains it
--   (seed 004): idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average_length)), as a
--   whole number of 1e-12 units (bm25_weight_units). Whole units make a score's sum exact in any order of addition, so
--   documents with equal statistics get exactly equal scores and the tie rule decides.
SELECT
    d.corpus,
    d.term,
    d.doc_row,
    {{ bm25_weight_units('s.idf', 'd.tf', 'd.length', 'c.average_length', k1, b) | indent(4) }} AS weight_units
FROM models.document_tokens AS d
JOIN models.bm25_terms AS s ON s.corpus = d.corpus AND s.term = d.term
JOIN models.bm25_collection AS c ON c.corpus = d.corpus
