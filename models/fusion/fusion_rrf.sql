-- name: fusion_rrf
-- version: 2
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score, denominator); unique_grain; accepted_range(score, 0, ); accepted_range(denominator, 1, 9007199254740992)
-- parameters: rrf_k = 60
-- description: Reciprocal rank fusion (seed 003, section 4): S = sum over the arms whose list holds
--   the document of 1 / (k + rank); an arm whose list does not hold it votes 0. S is the exact
--   fraction numerator / denominator (denominator = prod_a (k + rank_a), numerator = sum_a
--   denominator / (k + rank_a), integers), divided once, so that equal sums give equal scores and the
--   tie order decides (in doubles 1/63 + 1/140 and 1/84 + 1/90, both 29/1260, differ in the last bit).
--   k is a whole number; the audit keeps the denominator exact in a double (below 2^53).
{{- require(rrf_k == rrf_k | int, "rrf_k must be a whole number, not " ~ rrf_k) }}
WITH votes AS (
    SELECT corpus, query_row, doc_row, {{ rrf_k | int }} + rank AS denominator
    FROM models.fusion_candidates
    WHERE listed
),

products AS (
    SELECT corpus, query_row, doc_row, product(denominator) AS denominator
    FROM votes
    GROUP BY corpus, query_row, doc_row
),

fractions AS (
    SELECT
        v.corpus,
        v.query_row,
        v.doc_row,
        sum(CAST(p.denominator AS BIGINT) // v.denominator) AS numerator,
        CAST(max(p.denominator) AS BIGINT) AS denominator
    FROM votes AS v
    JOIN products AS p ON p.corpus = v.corpus AND p.query_row = v.query_row AND p.doc_row = v.doc_row
    GROUP BY v.corpus, v.query_row, v.doc_row
),

candidates AS (
    SELECT DISTINCT corpus, query_row, doc_row
    FROM models.fusion_candidates
)

SELECT
    c.corpus,
    c.query_row,
    c.doc_row,
    coalesce(CAST(f.numerator AS DOUBLE) / f.denominator, 0) AS score,
    coalesce(f.denominator, 1) AS denominator
FROM candidates AS c
LEFT JOIN fractions AS f ON f.corpus = c.corpus AND f.query_row = c.query_row AND f.doc_row = c.doc_row
