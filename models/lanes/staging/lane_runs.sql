-- name: lane_runs
-- version: 1
-- stage: prepare
-- grain: lane_set, topic, lane, docno
-- audits:
-- materialized: view
-- description: Lane runs users loaded (raw.lane_runs): a lane's aggregate score A_u(d) and source rank per
--   document.
SELECT lane_set, topic, lane, docno, source_rank, score, line
FROM raw.lane_runs
