-- name: population_summary
-- version: 1
-- stage: evaluate
-- grain: corpus
-- audits: not_null(corpus, queries, eligible, min_scored, max_scored, min_reference, max_reference, reference_outside_corpus, min_candidates, max_candidates, mean_candidates, incomplete, admitted, fallback, queries_without_admission, populations_agree); unique_grain; at_least_one_row
-- columns: min_scored = "The fewest documents an arm scored for a query", max_scored = "The most",
--   min_reference = "The smallest reference an arm had for a query", max_reference = "The largest",
--   reference_outside_corpus = "Panel documents that are not corpus documents", min_candidates = "The
--   smallest candidate union", max_candidates = "The largest", mean_candidates = "The mean", incomplete =
--   "Candidates some arm did not score", admitted = "Candidates admitted at eq. 27's level", fallback =
--   "Fallback candidates kept", queries_without_admission = "Queries that admitted nothing",
--   populations_agree = "Whether every arm scored every eligible document for every query, every reference
--   has the same size, no panel document lies outside the corpus and no candidate is incomplete (section 9's
--   first gate)"
-- description: Section 9's first gate (seed 003) over the whole corpus, from stage_populations: whether
--   the arms, the null instrument and the candidate union score the same population (populations_agree),
--   with the ranges behind it and admission's totals.
SELECT
    corpus,
    count(*) AS queries,
    max(eligible) AS eligible,
    least(min(bm25_scored), min(dense_scored)) AS min_scored,
    greatest(max(bm25_scored), max(dense_scored)) AS max_scored,
    least(min(bm25_reference), min(dense_reference)) AS min_reference,
    greatest(max(bm25_reference), max(dense_reference)) AS max_reference,
    max(reference_outside_corpus) AS reference_outside_corpus,
    min(candidates) AS min_candidates,
    max(candidates) AS max_candidates,
    {{ mean('candidates') }} AS mean_candidates,
    sum(candidates - complete) AS incomplete,
    sum(admitted) AS admitted,
    sum(fallback) AS fallback,
    count(*) FILTER (WHERE admitted = 0) AS queries_without_admission,
    least(min(bm25_scored), min(dense_scored)) = max(eligible)
        AND greatest(max(bm25_scored), max(dense_scored)) = max(eligible)
        AND least(min(bm25_reference), min(dense_reference)) = greatest(max(bm25_reference), max(dense_reference))
        AND max(reference_outside_corpus) = 0
        AND sum(candidates - complete) = 0 AS populations_agree
FROM models.stage_populations
GROUP BY corpus
