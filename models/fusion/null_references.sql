-- name: null_references
-- version: 5
-- stage: prepare
-- grain: arm, corpus, query_row, doc_row
-- audits: not_null(arm, corpus, query_row, doc_row, score); unique_grain; accepted_range(score, , ); at_least_one_row
-- dialect: duckdb: the dense arm's FLOAT[384] vectors and list_inner_product (sql/macros/dense.sql)
-- parameters: corpus = "banking77", reference_panel = "null_panel", arm_runs = []
-- description: Each arm's frozen null reference (seed 003, section 6, cold start): every query scored
--   against a fixed panel of documents drawn at random with a recorded seed (models.null_panels), before
--   and independently of retrieval, so never from the returned candidates. Lexical non-matches stay
--   in (a BM25 score of 0 is an observation). When fusion reads run files (arm_runs), each arm's
--   reference is the run file <run_id>.null: that arm's scores of its own panel for every query.
--   Otherwise the panel's documents are scored by the retrieval models' own macros (bm25_sums, cosines):
--   the same scores as bm25_scores' and dense_scores', without scoring the whole corpus.
{% if arm_runs %}
SELECT left(r.run_id, length(r.run_id) - 5) AS arm, {{ corpus | literal }} AS corpus, q.query_row, d.doc_row, r.score
FROM models.runs AS r
JOIN models.run_query_keys AS q ON q.qid = r.qid
JOIN models.run_document_keys AS d ON d.docno = r.docno
WHERE r.run_id LIKE '%.null' AND left(r.run_id, length(r.run_id) - 5) IN {{ arm_runs | literal }}
{% else %}
WITH panel AS (
    SELECT corpus, doc_row
    FROM models.null_panels
    WHERE panel = {{ reference_panel | literal }} AND corpus = {{ corpus | literal }}
),

-- Only the panel's documents are scored: a document's score does not depend on the others scored with it.
bm25_panel AS (
    {{ bm25_sums('models.query_tokens', 'models.bm25_query_ceilings', 'query_row', corpus, documents='panel') | indent(4) }}
),

dense_panel AS (
    {{ cosines(corpus, documents='panel') | indent(4) }}
)

SELECT 'bm25' AS arm, corpus, query_row, doc_row, score FROM bm25_panel
UNION ALL
SELECT 'dense' AS arm, corpus, query_row, doc_row, score FROM dense_panel
{% endif %}
