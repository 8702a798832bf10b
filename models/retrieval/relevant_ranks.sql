-- name: relevant_ranks
-- version: 1
-- stage: evaluate
-- grain: method, corpus, query_row, doc_row
-- audits: not_null(method, corpus, query_row, doc_row, rank); unique_grain; accepted_range(rank, 1, )
-- description: Where each relevant document stands in each method's full ranking: every measure of
--   the retrieval study is a function of these ranks and the number of relevant documents.
SELECT r.method, r.corpus, r.query_row, r.doc_row, r.rank
FROM models.rankings AS r
JOIN models.class_relevance AS c
    ON c.corpus = r.corpus AND c.query_row = r.query_row AND c.doc_row = r.doc_row
