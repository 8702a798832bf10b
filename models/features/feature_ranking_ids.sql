-- name: feature_ranking_ids
-- version: 1
-- stage: prepare
-- grain: system, corpus, qid, rank
-- audits:
-- materialized: view
-- companion: true
-- description: Seed 004 E2's full rankings (feature_rankings: bm25, cosine, dot, weighted) keyed by the
--   corpus' own ids: qid and docno beside the row numbers (query_row, doc_row). For analysts (a study
--   builds it after its prepare models; nothing reads it, nothing freezes it). A view, computed when read.
WITH ranked AS (
    {{ with_corpus_ids('models.feature_rankings', 'query_key', 'doc_key') | indent(4) }}
)

SELECT system, corpus, qid, docno, rank, score, query_key AS query_row, doc_key AS doc_row
FROM ranked
