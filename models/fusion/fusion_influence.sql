-- name: fusion_influence
-- version: 1
-- stage: prepare
-- grain: arm, corpus, query_row, doc_row
-- audits: not_null(arm, corpus, query_row, doc_row, influence); unique_grain; accepted_range(influence, 0, 1)
-- parameters: kappa = 0.0, beta = 0.5
-- description: Each arm's influence on a candidate's mixture score (seed 003, eq. 13): omega_a =
--   pi_a (kappa + p_a)^-beta / sum_b pi_b (kappa + p_b)^-beta, a per-row derivative, not a weight
--   shared across the query. Equal pi cancel.
SELECT
    arm,
    corpus,
    query_row,
    doc_row,
    pow({{ kappa }} + p, -{{ beta }})
        / sum(pow({{ kappa }} + p, -{{ beta }})) OVER (PARTITION BY corpus, query_row, doc_row) AS influence
FROM models.arm_p_values
