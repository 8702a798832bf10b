-- name: runs
-- version: 1
-- stage: prepare
-- grain: run_id, qid, docno
-- audits:
-- materialized: view
-- description: Every loaded TREC run line (raw.runs) as written: the rank field kept, the line number of the
--   file.
SELECT run_id, qid, docno, rank, score, tag, line
FROM raw.runs
