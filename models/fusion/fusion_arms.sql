-- name: fusion_arms
-- version: 1
-- stage: prepare
-- grain: arm, corpus, query_row, rank
-- audits:
-- materialized: view
-- parameters: arm_runs = [], corpus = "banking77"
-- description: The arms that fusion reads, each a full ranking: the study's retrieval rankings (bm25,
--   dense) or, when arm_runs names loaded run files, those runs under their run ids, ranked in
--   trec_eval's order (score descending, document id descending), with query and document ids
--   replaced by the row numbers of run_query_keys and run_document_keys.
{% if arm_runs %}
SELECT
    r.run_id AS arm,
    {{ corpus | literal }} AS corpus,
    q.query_row,
    d.doc_row,
    r.score,
    row_number() OVER (PARTITION BY r.run_id, r.qid ORDER BY r.score DESC, r.docno DESC) AS rank
FROM raw.runs AS r
JOIN models.run_query_keys AS q ON q.qid = r.qid
JOIN models.run_document_keys AS d ON d.docno = r.docno
WHERE r.run_id IN {{ arm_runs | literal }}
{% else %}
SELECT method AS arm, corpus, query_row, doc_row, score, rank
FROM models.rankings
{% endif %}
