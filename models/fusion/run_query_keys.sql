-- name: run_query_keys
-- version: 2
-- stage: prepare
-- grain: qid
-- audits: not_null(qid, query_row)
-- parameters: arm_runs = []
-- description: When fusion reads run files (arm_runs names their run ids), the row number that stands
--   for each query id (ids in byte order), over the arm runs and their null runs (<run_id>.null).
--   Unique by construction (distinct ids), so the grain is not audited.
WITH query_ids AS (
    SELECT DISTINCT qid
    FROM models.runs
    WHERE run_id IN {{ arm_runs | literal }}
       OR (run_id LIKE '%.null' AND left(run_id, length(run_id) - 5) IN {{ arm_runs | literal }})
)

SELECT qid, row_number() OVER (ORDER BY qid) - 1 AS query_row
FROM query_ids
