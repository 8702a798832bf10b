-- name: retrieval_ranking_ids
-- version: 1
-- stage: prepare
-- grain: system, corpus, qid, rank
-- audits:
-- materialized: view
-- companion: true
-- description: The full rankings of every retrieval method (retrieval_rankings: bm25, dense) keyed by the
--   corpus' own ids: qid (the query's id) and docno (the document's id) beside the row numbers the
--   rankings are keyed by (query_row, doc_row). For analysts (a study builds it after its prepare models;
--   nothing reads it, nothing freezes it): `FROM models.retrieval_ranking_ids WHERE qid = '...' AND rank
--   <= 10`. A view, computed when read.
WITH ranked AS (
    {{ with_corpus_ids('models.retrieval_rankings', 'query_key', 'doc_key') | indent(4) }}
)

SELECT system, corpus, qid, docno, rank, score, query_key AS query_row, doc_key AS doc_row
FROM ranked
