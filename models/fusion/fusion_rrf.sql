-- name: fusion_rrf
-- version: 3
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score, denominator); accepted_range(score, 0, ); accepted_range(denominator, 1, 9007199254740992)
-- parameters: rrf_k = 60
-- description: Reciprocal rank fusion (seed 003, section 4): S = sum over the arms whose list holds
--   the document of 1 / (k + rank); an arm whose list does not hold it votes 0 (no denominator).
--   S is the exact fraction numerator / denominator (denominator = prod_a (k + rank_a), numerator =
--   sum_a denominator / (k + rank_a), integers), divided once, so that equal sums give equal scores
--   and the tie order decides (in doubles 1/63 + 1/140 and 1/84 + 1/90, both 29/1260, differ in the
--   last bit). k is a whole number; the audit keeps the denominator exact in a double (below 2^53).
--   Unique by construction (grouped by its grain).
{{- require(rrf_k == rrf_k | int, "rrf_k must be a whole number, not " ~ rrf_k) }}
WITH votes AS (
    SELECT corpus, query_row, doc_row, CASE WHEN listed THEN {{ rrf_k | int }} + rank END AS denominator
    FROM models.fusion_candidates
),

common_denominators AS (
    SELECT
        corpus,
        query_row,
        doc_row,
        denominator,
        CAST(product(denominator) OVER (PARTITION BY corpus, query_row, doc_row) AS BIGINT) AS common
    FROM votes
)

SELECT
    corpus,
    query_row,
    doc_row,
    coalesce(CAST(sum(common // denominator) AS DOUBLE) / max(common), 0) AS score,
    coalesce(max(common), 1) AS denominator
FROM common_denominators
GROUP BY corpus, query_row, doc_row
