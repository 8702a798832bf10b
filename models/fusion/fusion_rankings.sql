-- name: fusion_rankings
-- version: 1
-- stage: prepare
-- grain: system, query_key, rank
-- audits:
-- materialized: view
-- description: Every fused ranking and both arms' (fused_rankings) in the rankings shape: system = the
--   rule or arm, query_key = the query's row, doc_key = the document's row.
SELECT rule AS system, query_row AS query_key, doc_row AS doc_key, rank, score
FROM models.fused_rankings
