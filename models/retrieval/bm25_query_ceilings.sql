-- name: bm25_query_ceilings
-- version: 2
-- stage: prepare
-- grain: corpus, query_row
-- audits: not_null(corpus, query_row, ceiling); unique_grain; accepted_range(ceiling, 0, 9007)
-- parameters: k1 = 1.2
-- description: Every query with a ceiling on its BM25 score: (k1 + 1) times the sum of idf over its
--   distinct terms, since each term's tf / (tf + k1 * (1 - b + b * length / average_length)) is below
--   1; 0 for a query without a corpus term. The audit keeps every score below 2^53 units of 1e-12
--   (9,007.2), where bm25_scores' sums of whole units in doubles are exact in any order.
SELECT q.corpus, q.query_row, ({{ k1 }} + 1) * coalesce(sum(s.idf), 0) AS ceiling
FROM models.queries AS q
LEFT JOIN models.query_tokens AS t ON t.corpus = q.corpus AND t.query_row = q.query_row
LEFT JOIN models.bm25_terms AS s ON s.corpus = t.corpus AND s.term = t.term
GROUP BY q.corpus, q.query_row
