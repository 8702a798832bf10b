-- name: run_blocks
-- version: 1
-- stage: prepare
-- grain: run_id, qid
-- audits:
-- materialized: view
-- description: Where each query's lines are in a loaded run file (raw.run_blocks, found by the fast
--   reader as it read the file): the block of lines from first_line, `lines` long, and whether they are
--   in trec_eval's order comparing scores as doubles (double_order) and as 32-bit floats (float_order).
--   Every query of a loaded run has its row; a query listed in two places, and every query of a file
--   the general reader loaded, is in no order.
SELECT run_id, qid, first_line, lines, double_order, float_order
FROM raw.run_blocks
