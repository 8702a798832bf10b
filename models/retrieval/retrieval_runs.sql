-- name: retrieval_runs
-- version: 4
-- stage: prepare
-- grain: method, corpus, qid, rank
-- audits: not_null(method, corpus, qid, doc_id, rank, score); unique_grain; accepted_range(rank, 1, ); at_least_one_row
-- parameters: run_depth = 100
-- description: The first run_depth documents of every method's full ranking (retrieval_rankings), with
--   ids: the label-free result that is written out as TREC runs and frozen with the full rankings.
SELECT r.system AS method, r.corpus, q.qid, d.doc_id, r.rank, r.score
FROM models.retrieval_rankings AS r
JOIN models.queries AS q ON q.corpus = r.corpus AND q.query_row = r.query_key
JOIN models.documents AS d ON d.corpus = r.corpus AND d.doc_row = r.doc_key
WHERE r.rank <= {{ run_depth }}
