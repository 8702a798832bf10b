-- name: null_references
-- version: 6
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
WITH null_lines AS (
    SELECT left(run_id, length(run_id) - 5) AS arm, qid, docno, score
    FROM models.runs
    WHERE run_id LIKE '%.null' AND left(run_id, length(run_id) - 5) IN {{ arm_runs | literal }}
),

-- The row numbers of the panels' documents alone, so that the join to the null lines is built on these few
-- keys (built on the lines, DuckDB chained each panel document's line of every query: twice the time).
panel_keys AS (
    SELECT d.docno, d.doc_row
    FROM models.run_document_keys AS d
    JOIN (SELECT DISTINCT docno FROM null_lines) AS p ON p.docno = d.docno
)

SELECT r.arm, {{ corpus | literal }} AS corpus, q.query_row, d.doc_row, r.score
FROM null_lines AS r
JOIN models.run_query_keys AS q ON q.qid = r.qid
JOIN panel_keys AS d ON d.docno = r.docno
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
