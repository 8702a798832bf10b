-- name: comparisons
-- version: 1
-- stage: evaluate
-- grain: study, subset, contrast, measure
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, mean_a, mean_b, difference, ci_low, ci_high, test, correction, family_size); unique_grain
-- parameters: p_value_correction = "holm", significance_level = 0.05
-- description: The table of a comparison with baselines (`rankhouse compare`): for each contrast [a, b]
--   and measure, the means of a and b over the subset's queries (run_measures), the mean paired
--   difference a - b and its percentile interval (paired_bootstrap, at `interval_level`), the p-value
--   of the test `significance_test` and that p adjusted over the family of b's comparisons by
--   `p_value_correction` ("holm", "bonferroni" or "none": adjusted_p_values), and whether the adjusted
--   p is below `significance_level` (alpha). p_value and p_adjusted are NULL where the test is
--   undefined (fewer than two queries with a difference).
{{ require(p_value_correction in ["holm", "bonferroni", "none"], "p_value_correction is holm, bonferroni or none") }}
{{ require(significance_level > 0 and significance_level < 1, "significance_level (alpha) is between 0 and 1") }}
{%- set adjusted = {"holm": "p_holm", "bonferroni": "p_bonferroni", "none": "p_value"}[p_value_correction] %}
SELECT
    b.study,
    b.subset,
    b.system_a,
    b.system_b,
    b.contrast,
    b.measure,
    ma.value AS mean_a,
    mb.value AS mean_b,
    b.mean AS difference,
    b.ci_low,
    b.ci_high,
    b.queries,
    b.replicates,
    p.test,
    {{ p_value_correction | literal }} AS correction,
    p.family_size,
    p.p_value,
    p.{{ adjusted }} AS p_adjusted,
    p.{{ adjusted }} < {{ significance_level }} AS significant
FROM models.paired_bootstrap AS b
JOIN models.run_measures AS ma ON ma.study = b.study AND ma.subset = b.subset AND ma.system = b.system_a AND ma.measure = b.measure
JOIN models.run_measures AS mb ON mb.study = b.study AND mb.subset = b.subset AND mb.system = b.system_b AND mb.measure = b.measure
JOIN models.adjusted_p_values AS p
    ON p.study = b.study AND p.subset = b.subset AND p.contrast = b.contrast AND p.measure = b.measure
