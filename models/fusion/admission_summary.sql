-- name: admission_summary
-- version: 1
-- stage: prepare
-- grain: corpus
-- audits: not_null(corpus, queries, candidates, admitted, fallback, queries_without_admission); unique_grain
-- description: What admission at the starvation-bounded level did (admission, seed 003 eq. 12/27), per
--   corpus: queries, candidates, candidates admitted, dense fallback candidates kept, and queries that
--   admitted nothing.
SELECT
    corpus,
    count(DISTINCT query_row) AS queries,
    count(*) AS candidates,
    count(*) FILTER (WHERE admitted) AS admitted,
    count(*) FILTER (WHERE fallback) AS fallback,
    count(DISTINCT query_row) - count(DISTINCT query_row) FILTER (WHERE admitted) AS queries_without_admission
FROM models.admission
GROUP BY corpus
