-- name: retrieval_runs
-- version: 1
-- stage: prepare
-- grain: method, corpus, qid, rank
-- audits: not_null(method, corpus, qid, doc_id, rank, score); unique_grain; accepted_range(rank, 1, ); at_least_one_row
-- parameters: run_depth = 100
-- description: The first run_depth documents of every method's full ranking, with ids: the label-free
--   result that is written out as TREC runs and frozen (the full rankings are frozen through their
--   inputs and SQL).
SELECT r.method, r.corpus, q.qid, d.doc_id, r.rank, r.score
FROM models.rankings AS r
JOIN raw.queries AS q ON q.corpus = r.corpus AND q.row_index = r.query_row
JOIN raw.documents AS d ON d.corpus = r.corpus AND d.row_index = r.doc_row
WHERE r.rank <= {{ run_depth }}
