-- name: weighted_queries
-- version: 1
-- stage: prepare
-- grain: corpus, query_row
-- audits: not_null(corpus, query_row, terms, denominator); unique_grain; accepted_range(denominator, 0, )
-- parameters: corpus = "banking77"
-- dialect: duckdb: list lambdas and an ordered list aggregate
-- description: The query side of weighted relevance (seed 004 E2, method 4) for every query: its terms
--   round(w_i * 1e6) * q_i in schema order (weighted_terms, sql/macros/features.sql) and their sum,
--   the denominator sum(w_i q_i) in 1e-9 units (0 for a query without any weighted value: every
--   document then scores 0 and the row-index rule orders them).
WITH weights AS (
    SELECT list(weight ORDER BY position) AS weights FROM models.feature_weights
),

terms AS (
    SELECT q.corpus, q.query_row, {{ weighted_terms('q.feature_units', 'w.weights') }} AS terms
    FROM models.query_features AS q
    CROSS JOIN weights AS w
    WHERE q.corpus = {{ corpus | literal }}
)

SELECT corpus, query_row, terms, list_sum(terms) AS denominator
FROM terms
