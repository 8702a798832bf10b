-- name: group_clusters
-- version: 1
-- stage: prepare
-- grain: query
-- audits: not_null(query, cluster, cluster_order); unique_grain
-- materialized: view
-- description: The cluster of each E3 phrase for the shared cluster bootstrap (cluster_bootstrap,
--   parameter query_clusters): the query id (item), its group and the group's position in the groups
--   file (cluster_order, the unit a cluster plan resamples). Paraphrases of a group are correlated
--   (seed 004), so intervals resample groups, not phrases.
SELECT item AS query, group_id AS cluster, group_row AS cluster_order
FROM models.group_queries
