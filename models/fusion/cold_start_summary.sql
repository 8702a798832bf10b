-- name: cold_start_summary
-- version: 1
-- stage: evaluate
-- grain: arm, query_group
-- audits: not_null(arm, query_group, queries, mean_distance, median_distance, max_distance, dkw_reference, mean_shift_lower, shifted_queries, mean_eta, max_eta, contaminated_queries); unique_grain; at_least_one_row
-- columns: query_group = "The queries' group (fusion_query_groups), or all", mean_distance = "The mean over
--   the queries of sup |G_m - F_n| (cold_start_distances)", median_distance = "Its median", max_distance =
--   "Its largest", dkw_reference = "eq. 25's first term at the reference size m", mean_shift_lower = "The
--   mean lower bound on eq. 25's second term, the shift sup |G - F0|", shifted_queries = "Queries whose
--   lower bound is above 0: a shift the sampling error cannot explain", mean_eta = "The panel's mean
--   contamination eta_q by relevant documents", max_eta = "Its largest", contaminated_queries = "Queries
--   whose panel holds a relevant document"
-- description: Cold-start references against held-out real query-document scores, split by query group
--   (seed 003, section 9; eq. 25): per arm and group (and all), the distances between each query's frozen
--   panel reference and its held-out null scores (cold_start_distances), the DKW term at the reference
--   size, the estimated lower bounds on the shift, and the panel's contamination eta_q. Means are exact
--   (the mean macro).
WITH grouped AS (
    SELECT arm, query_group, distance, reference_size, dkw_reference, shift_lower, eta, panel_relevant
    FROM models.cold_start_distances
    UNION ALL
    SELECT arm, 'all' AS query_group, distance, reference_size, dkw_reference, shift_lower, eta, panel_relevant
    FROM models.cold_start_distances
)

SELECT
    arm,
    query_group,
    count(*) AS queries,
    {{ mean('distance') }} AS mean_distance,
    {{ median('distance') }} AS median_distance,
    max(distance) AS max_distance,
    max(dkw_reference) AS dkw_reference,
    {{ mean('shift_lower') }} AS mean_shift_lower,
    count(*) FILTER (WHERE shift_lower > 0) AS shifted_queries,
    {{ mean('eta') }} AS mean_eta,
    max(eta) AS max_eta,
    count(*) FILTER (WHERE panel_relevant > 0) AS contaminated_queries
FROM grouped
GROUP BY arm, query_group
