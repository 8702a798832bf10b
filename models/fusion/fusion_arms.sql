-- name: fusion_arms
-- version: 2
-- stage: prepare
-- grain: arm, corpus, query_row, rank
-- audits:
-- materialized: view
-- parameters: arm_runs = [], corpus = "banking77"
-- description: The arms that fusion reads, each a full ranking: the study's retrieval rankings (bm25,
--   dense) or, when arm_runs names loaded run files, those runs under their run ids in trec_eval's
--   order (run_ranking), with query and document ids replaced by the row numbers of run_query_keys
--   and run_document_keys.
{% if arm_runs %}
SELECT r.system AS arm, {{ corpus | literal }} AS corpus, q.query_row, d.doc_row, r.score, r.rank
FROM models.run_ranking AS r
JOIN models.run_query_keys AS q ON q.qid = r.query_key
JOIN models.run_document_keys AS d ON d.docno = r.doc_key
WHERE r.system IN {{ arm_runs | literal }}
{% else %}
SELECT system AS arm, corpus, query_key AS query_row, doc_key AS doc_row, score, rank
FROM models.retrieval_rankings
{% endif %}
