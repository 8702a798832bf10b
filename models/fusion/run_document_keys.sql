-- name: run_document_keys
-- version: 2
-- stage: prepare
-- grain: docno
-- audits: not_null(docno, doc_row)
-- parameters: arm_runs = []
-- description: When fusion reads run files (arm_runs names their run ids), the row number that stands
--   for each document id (ids in byte order), over the arm runs and their null runs (<run_id>.null).
--   Unique by construction (distinct ids), so the grain is not audited.
WITH document_ids AS (
    SELECT DISTINCT docno
    FROM models.runs
    WHERE run_id IN {{ arm_runs | literal }}
       OR (run_id LIKE '%.null' AND left(run_id, length(run_id) - 5) IN {{ arm_runs | literal }})
)

SELECT docno, row_number() OVER (ORDER BY docno) - 1 AS doc_row
FROM document_ids
