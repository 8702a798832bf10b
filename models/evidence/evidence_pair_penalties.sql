-- name: evidence_pair_penalties
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, doc_a, doc_b
-- audits: not_null(bundle, task_id, doc_a, doc_b, positive, penalty); unique_grain; accepted_range(penalty, 0, )
-- parameters: budget = 5
-- description: The pair penalty of seed 000's objective: p(d, e) = max(0, d.e) / C(budget, 2), with
--   C(5, 2) = 10, so that the penalties of all pairs of a full selection cost at most one facet's
--   weight. One row per unordered pair of a pool (doc_a < doc_b).
SELECT
    bundle,
    task_id,
    doc_a,
    doc_b,
    greatest(cosine, 0) AS positive,
    greatest(cosine, 0) / ({{ budget }} * ({{ budget }} - 1) / 2.0) AS penalty
FROM models.evidence_pair_cosines
