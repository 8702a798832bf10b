-- name: bm25_scores
-- version: 3
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- aggregate: array
-- description: BM25 (seed 004) of every (query, document) pair of a corpus: the sum of the document's
--   bm25_weights over the query's distinct terms; 0 when they share no term. The weights are whole
--   1e-12 units, and no score can reach 2^53 units (bm25_query_ceilings), so their sum in doubles is
--   exact in any order of addition. One corpus (the parameter) at a time.
WITH term_matches AS (
    SELECT CAST(q.query_row AS INTEGER) AS query_row, CAST(w.doc_row AS INTEGER) AS doc_row, w.weight_units
    FROM models.query_tokens AS q
    JOIN models.bm25_weights AS w ON w.term = q.term
    WHERE q.corpus = {{ corpus | literal }} AND w.corpus = {{ corpus | literal }}
),

-- Every pair once with weight 0, so that a pair without a common term still gets its score of 0.
every_pair AS (
    SELECT
        CAST(q.query_row AS INTEGER) AS query_row,
        CAST(d.doc_row AS INTEGER) AS doc_row,
        CAST(0 AS BIGINT) AS weight_units
    FROM models.bm25_query_ceilings AS q
    CROSS JOIN models.documents AS d
    WHERE q.corpus = {{ corpus | literal }} AND d.corpus = {{ corpus | literal }}
)

-- 32-bit row keys: DuckDB sums over their known ranges into an array (aggregate: array), and the
-- ranking's sort is faster on them.
SELECT
    {{ corpus | literal }} AS corpus,
    u.query_row,
    u.doc_row,
    sum(CAST(u.weight_units AS DOUBLE)) / 1e12 AS score
FROM (SELECT * FROM term_matches UNION ALL SELECT * FROM every_pair) AS u
GROUP BY u.query_row, u.doc_row
