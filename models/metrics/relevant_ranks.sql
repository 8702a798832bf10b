-- name: relevant_ranks
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: study, system, query, rank
-- audits: not_null(study, system, query, rank, relevant_so_far); unique_grain
-- materialized: view
-- description: The ranks of the relevant documents (judged_ranking.relevant, the relevance level's), with
--   relevant_so_far, how many relevant documents are ranked there or above: what interpolated precision
--   (IPrec, 11pt_avg) and binG read.
SELECT
    study,
    system,
    query,
    rank,
    row_number() OVER (PARTITION BY study, system, query ORDER BY rank) AS relevant_so_far
FROM models.judged_ranking
WHERE relevant
