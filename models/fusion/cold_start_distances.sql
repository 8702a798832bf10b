-- name: cold_start_distances
-- version: 1
-- stage: evaluate
-- grain: arm, query_row
-- audits: not_null(arm, query_row, query_group, reference_size, null_size, distance, dkw_reference, dkw_null, shift_lower, panel_relevant, eta); unique_grain; accepted_range(distance, 0, 1); accepted_range(eta, 0, 1); at_least_one_row
-- parameters: corpus = "banking77", reference_panel = "null_panel", dkw_delta = 0.05
-- columns: reference_size = "m: the query's reference scores (its panel)", null_size = "n: its held-out null
--   scores (calibration sample documents not relevant to it)", distance = "sup_s |G_m(s) - F_n(s)|: the
--   largest gap between the two empirical distribution functions (the two-sample Kolmogorov-Smirnov
--   statistic)", dkw_reference = "sqrt(ln(2/delta) / 2m): eq. 25's first term for the reference",
--   dkw_null = "The same for the held-out null sample", shift_lower = "max(0, distance - dkw_reference -
--   dkw_null): with probability at least 1 - 2 delta a lower bound on the true shift sup |G - F0|, eq. 25's
--   second term", panel_relevant = "Panel documents relevant to the query", eta = "panel_relevant / m: the
--   panel's contamination eta_q by relevant documents"
-- description: Cold-start references against held-out real query-document scores (seed 003, section 9
--   and eq. 25), per arm and query: the distance between the query's frozen reference (its scores of the
--   random panel, G) and its held-out null scores (the calibration sample's documents that are not
--   relevant to it, an estimate of the true null F0), with both samples' DKW-Massart terms and the lower
--   bound they leave for eq. 25's second term, the shift sup |G - F0|; and the panel's contamination
--   eta_q, the share of its documents relevant to the query. cold_start_summary splits it by query group.
--   Both distribution functions are evaluated at every score with ties together (RANGE frames), as
--   scipy.stats.ks_2samp's statistic.
WITH reference AS (
    SELECT arm, query_row, score, 1 AS is_reference
    FROM models.null_references
),

held_out_null AS (
    SELECT arm, query_row, score, 0 AS is_reference
    FROM models.calibration_scores
    WHERE held_out AND NOT relevant AND arm IN ('bm25', 'dense')
),

pooled AS (
    SELECT * FROM reference
    UNION ALL
    SELECT * FROM held_out_null
),

distribution_functions AS (
    SELECT
        arm,
        query_row,
        sum(is_reference) OVER (
            PARTITION BY arm, query_row ORDER BY score RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS reference_at_or_below,
        sum(1 - is_reference) OVER (
            PARTITION BY arm, query_row ORDER BY score RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS null_at_or_below,
        sum(is_reference) OVER (PARTITION BY arm, query_row) AS reference_size,
        sum(1 - is_reference) OVER (PARTITION BY arm, query_row) AS null_size
    FROM pooled
),

distances AS (
    SELECT
        arm,
        query_row,
        min(reference_size) AS reference_size,
        min(null_size) AS null_size,
        max(abs(reference_at_or_below / reference_size - null_at_or_below / null_size)) AS distance
    FROM distribution_functions
    WHERE null_size > 0
    GROUP BY arm, query_row
),

contamination AS (
    SELECT j.query_key AS query_row, count(DISTINCT j.doc_key) AS panel_relevant
    FROM models.judgments AS j
    JOIN models.null_panels AS p
        ON p.panel = {{ reference_panel | literal }} AND p.corpus = {{ corpus | literal }} AND p.doc_row = j.doc_key
    WHERE j.grade > 0
    GROUP BY j.query_key
)

SELECT
    d.arm,
    d.query_row,
    g.query_group,
    d.reference_size,
    d.null_size,
    d.distance,
    sqrt(ln(2 / {{ dkw_delta }}) / (2 * d.reference_size)) AS dkw_reference,
    sqrt(ln(2 / {{ dkw_delta }}) / (2 * d.null_size)) AS dkw_null,
    greatest(0, d.distance - sqrt(ln(2 / {{ dkw_delta }}) / (2 * d.reference_size))
        - sqrt(ln(2 / {{ dkw_delta }}) / (2 * d.null_size))) AS shift_lower,
    coalesce(c.panel_relevant, 0) AS panel_relevant,
    coalesce(c.panel_relevant, 0) / d.reference_size AS eta
FROM distances AS d
JOIN models.fusion_query_groups AS g ON g.query_row = d.query_row
LEFT JOIN contamination AS c ON c.query_row = d.query_row
