-- name: reference_bounds
-- version: 1
-- stage: prepare
-- grain: arm, corpus
-- audits: not_null(arm, corpus, reference_size, dkw_epsilon); unique_grain; accepted_range(dkw_epsilon, 0, 1)
-- parameters: dkw_delta = 0.05
-- description: For each arm's reference size m, the DKW-Massart bound on the empirical null CDF
--   (seed 003, eq. 25): with probability at least 1 - delta, sup |G_m - G| <= sqrt(ln(2/delta) / 2m);
--   m counts panel documents, the independent sampling units, not query-document pairs.
SELECT
    arm,
    corpus,
    min(reference_size) AS reference_size,
    sqrt(ln(2 / {{ dkw_delta }}) / (2 * min(reference_size))) AS dkw_epsilon
FROM models.arm_p_values
GROUP BY arm, corpus
