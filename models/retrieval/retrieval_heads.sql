-- name: retrieval_heads
-- version: 1
-- stage: prepare
-- grain: system, corpus, query_row, rank
-- audits:
-- parameters: corpus = "banking77", run_depth = 100
-- materialized: view
-- dialect: duckdb: max_by with a count keeps each query's first run_depth documents in a bounded heap, where a window would sort all 30.8M pairs
-- description: The first run_depth documents of every method's full ranking (bm25_ranking,
--   dense_ranking): the same documents, ranks and scores, found without ranking every pair. Each
--   query keeps the run_depth greatest (score, -doc_row), so exact ties go to the smaller row index
--   as in the full rankings (seed 004). A view, computed when read (retrieval_runs).
WITH heads AS (
    SELECT 'bm25' AS system, query_row, max_by((doc_row, score), (score, -doc_row), {{ run_depth }}) AS head
    FROM models.bm25_scores
    GROUP BY query_row

    UNION ALL

    SELECT 'dense' AS system, query_row, max_by((doc_row, score), (score, -doc_row), {{ run_depth }}) AS head
    FROM models.dense_scores
    GROUP BY query_row
),

-- max_by lists the kept documents best first: a document's place in the list is its rank.
ranked AS (
    SELECT system, query_row, unnest(head) AS document, generate_subscripts(head, 1) AS rank
    FROM heads
)

SELECT
    system,
    {{ corpus | literal }} AS corpus,
    query_row,
    document[1] AS doc_row,
    rank,
    CAST(document[2] AS DOUBLE) AS score
FROM ranked
