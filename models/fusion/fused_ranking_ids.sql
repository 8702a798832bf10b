-- name: fused_ranking_ids
-- version: 1
-- stage: prepare
-- grain: rule, corpus, qid, rank
-- audits:
-- parameters: arm_runs = []
-- materialized: view
-- companion: true
-- description: Every fusion rule's ranking and both arms' (fused_rankings) keyed by the corpus' own ids:
--   qid and docno beside the row numbers (query_row, doc_row), from the corpus' queries and documents or,
--   when fusion reads run files (arm_runs), from the ids the run files use (run_query_keys,
--   run_document_keys). For analysts (a study builds it after its prepare models; nothing reads it,
--   nothing freezes it). A view, computed when read.
{% if arm_runs %}
WITH ranked AS (
    SELECT f.*, q.qid, d.docno
    FROM models.fused_rankings AS f
    JOIN models.run_query_keys AS q ON q.query_row = f.query_row
    JOIN models.run_document_keys AS d ON d.doc_row = f.doc_row
)
{% else %}
WITH ranked AS (
    {{ with_corpus_ids('models.fused_rankings', 'query_row', 'doc_row') | indent(4) }}
)
{% endif %}
SELECT rule, corpus, qid, docno, rank, score, dense_score, query_row, doc_row
FROM ranked
