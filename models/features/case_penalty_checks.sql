-- name: case_penalty_checks
-- version: 1
-- stage: prepare
-- grain: case_id
-- audits: not_null(case_id, documents, comparisons, violations); unique_grain; accepted_range(violations, 0, 0)
-- description: The mechanical check of seed 004 E4 that a document's raw score never increases as its
--   penalty weight increases: per case, every document's scores (case_scores) in increasing penalty
--   (0, 0.25, 0.5, 1), each compared with the one before; violations counts the increases, which the
--   audit requires to be 0.
WITH steps AS (
    SELECT
        case_id,
        doc_row,
        score,
        lag(score) OVER (PARTITION BY case_id, doc_row ORDER BY penalty) AS previous
    FROM models.case_scores
)

SELECT
    case_id,
    count(DISTINCT doc_row) AS documents,
    count(previous) AS comparisons,
    count(*) FILTER (WHERE score > previous) AS violations
FROM steps
GROUP BY case_id
