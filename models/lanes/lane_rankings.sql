-- name: lane_rankings
-- version: 1
-- stage: prepare
-- grain: system, query_key, rank
-- audits:
-- materialized: view
-- description: The three orderings of every topic's candidates (lane_orderings) in the rankings shape:
--   system = the ordering (combo, breadth, narrative), query_key = the topic, doc_key = the document id.
SELECT method AS system, topic AS query_key, doc_id AS doc_key, rank, score
FROM models.lane_orderings
