-- name: bm25_scores
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: corpus = "banking77"
-- materialized: view
-- description: BM25 (seed 004) of every (query, document) pair of a corpus: the sum of the document's
--   bm25_weights over the query's distinct terms; 0 when they share no term. One corpus (the
--   parameter) at a time.
WITH term_matches AS (
    SELECT q.query_row, w.doc_row, w.weight_units
    FROM models.query_tokens AS q
    JOIN models.bm25_weights AS w ON w.term = q.term
    WHERE q.corpus = {{ corpus | literal }} AND w.corpus = {{ corpus | literal }}
),

-- Every pair once with weight 0, so that a pair without a common term still gets its score of 0.
every_pair AS (
    SELECT q.row_index AS query_row, d.row_index AS doc_row, CAST(0 AS BIGINT) AS weight_units
    FROM raw.queries AS q
    CROSS JOIN raw.documents AS d
    WHERE q.corpus = {{ corpus | literal }} AND d.corpus = {{ corpus | literal }}
),

collection AS (
    SELECT documents FROM models.bm25_collection WHERE corpus = {{ corpus | literal }}
),

-- Row indices are 0-based positions, so pair = query_row * N + doc_row numbers the pairs densely
-- from 0: summing over that one dense key lets DuckDB add into an array instead of a hash table.
pair_totals AS (
    SELECT u.query_row * c.documents + u.doc_row AS pair, sum(u.weight_units) AS total_units
    FROM (SELECT * FROM term_matches UNION ALL SELECT * FROM every_pair) AS u
    CROSS JOIN collection AS c
    GROUP BY u.query_row * c.documents + u.doc_row
)

SELECT
    {{ corpus | literal }} AS corpus,
    CAST(t.pair // c.documents AS INTEGER) AS query_row,  -- 32-bit keys sort faster in the ranking
    CAST(t.pair % c.documents AS INTEGER) AS doc_row,
    t.total_units / 1e12 AS score
FROM pair_totals AS t
CROSS JOIN collection AS c
