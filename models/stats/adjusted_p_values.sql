-- name: adjusted_p_values
-- version: 1
-- stage: evaluate
-- grain: study, subset, contrast, measure
-- audits: not_null(study, subset, test, system_a, system_b, contrast, measure, family_size); unique_grain; accepted_range(p_holm, 0, 1); accepted_range(p_bonferroni, 0, 1)
-- parameters: significance_test = "t"
-- description: p-values adjusted for multiple testing, over each family of tests against one baseline:
--   the p-values of the test `significance_test` ("t": paired_t_tests, "randomization":
--   paired_randomization_tests, "bootstrap": paired_bootstrap_tests) of every contrast [a, b] with the
--   same b and every measure, in one study and subset (the runs x measures of a comparison with b).
--   With m the p-values of the family (NULL ones, of undefined tests, left out) in ascending order
--   p_(1) <= ... <= p_(m): Bonferroni, min(1, m p); Holm's step-down procedure (Holm 1979), as adjusted
--   p-values (Wright 1992, "Adjusted P-values for simultaneous inference"), p_holm_(i) =
--   max over j <= i of min(1, (m - j + 1) p_(j)), monotone in i. Equal p-values are ranked by contrast
--   and measure, which changes nothing: the later of two equal p-values gets the earlier's adjusted
--   value, the larger. Rejecting where an adjusted p is below alpha is Holm's procedure at level alpha.
--   family_rank is i; the unadjusted p_value is the correction "none".
{{ require(significance_test in ["t", "randomization", "bootstrap"],
           "significance_test is t, randomization or bootstrap") }}
{%- set source = {"t": "paired_t_tests", "randomization": "paired_randomization_tests",
                  "bootstrap": "paired_bootstrap_tests"}[significance_test] %}
WITH p_values AS (
    SELECT study, subset, system_a, system_b, contrast, measure, p_value
    FROM models.{{ source }}
),

ranked AS (
    SELECT
        *,
        count(p_value) OVER (PARTITION BY study, subset, system_b) AS family_size,
        CASE WHEN p_value IS NOT NULL THEN
            row_number() OVER (PARTITION BY study, subset, system_b, p_value IS NULL ORDER BY p_value, contrast, measure)
        END AS family_rank
    FROM p_values
)

SELECT
    study,
    subset,
    {{ significance_test | literal }} AS test,
    system_a,
    system_b,
    contrast,
    measure,
    p_value,
    family_size,
    family_rank,
    least(1, family_size * p_value) AS p_bonferroni,
    CASE WHEN p_value IS NOT NULL THEN
        max(least(1, (family_size - family_rank + 1) * p_value)) OVER (
            PARTITION BY study, subset, system_b, p_value IS NULL
            ORDER BY family_rank
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        )
    END AS p_holm
FROM ranked
