-- name: evidence_selections
-- version: 1
-- stage: prepare
-- grain: bundle, method, task_id, rank
-- audits: not_null(bundle, method, task_id, rank, doc_id); unique_grain; accepted_range(rank, 1, ); at_least_one_row
-- parameters: budget = 5
-- description: The label-free selections that the study freezes (seed 000, "budget" 5): `coverage`,
--   the greedy facet-coverage selection in its selection order, and the first `budget` documents of
--   the comparator runs `dense` and `typed`. The oracle is not here: it reads labels and is built
--   only after the freeze (evidence_oracle).
SELECT bundle, 'coverage' AS method, task_id, rank, doc_id
FROM models.evidence_greedy

UNION ALL

SELECT bundle, method, task_id, rank, doc_id
FROM models.evidence_runs
WHERE rank <= {{ budget }}
