-- name: run_blocks
-- version: 1
-- stage: prepare
-- grain: run_id, qid
-- audits:
-- materialized: view
-- description: Where each query's lines are in a loaded run file (raw.run_blocks, found by the fast
--   reader as it read the file): the block of lines from first_line, `lines` long, and whether they are
--   in trec_eval's order comparing scores as doubles (double_order) and as 32-bit floats (float_order).
--   A run that lists some query in two places, or that the general reader loaded, has no rows.
SELECT run_id, qid, first_line, lines, double_order, float_order
FROM raw.run_blocks
