-- name: paired_bootstrap_tests
-- version: 2
-- stage: evaluate
-- grain: study, subset, contrast, measure
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, mean, replicates, extreme, p_value); unique_grain; accepted_range(p_value, 0, 1)
-- description: The paired bootstrap test of the difference a - b, for each contrast and measure of
--   bootstrap_replicates, over each query subset: the replicates of the plan resample the observed
--   differences, whose mean is d; resampling d_i - d instead (the null hypothesis of mean 0 made true by
--   shifting the data: Efron and Tibshirani 1993, An Introduction to the Bootstrap, section 16.4)
--   gives replicate means d*_r - d. Two-sided, the replicates at least as extreme are those with
--   |d*_r - d| >= |d|, compared exactly: with U_r and c_r the replicate's sum in 1e-17 units and its
--   draws, and U and n those of the observed differences, |U_r n - U c_r| >= |U c_r| (a tie counts as
--   at least as extreme), at 1e-12 of a mean (the statistics macro tie_margin of n c_r: far above a
--   double's rounding error, so that means whose exact values are equal tie). With R replicates (those with a mean), p = (1 + extreme) / (1 + R), the
--   observed sample counted as one of the R + 1 (Davison and Hinkley 1997, ch. 4), as in
--   paired_randomization_tests. The shift test is not studentized (Sakai 2006's is); at small n it is
--   known to reject too often (Urbano et al. 2019): prefer the t or the randomization test there.
WITH observed AS (
    SELECT
        study,
        subset,
        contrast,
        measure,
        {{ units_sum('units') }} AS units,
        count(units) AS differences,
        {{ mean('units / 1e17') }} AS mean
    FROM models.paired_differences
    GROUP BY study, subset, contrast, measure
),

tests AS (
    SELECT
        r.study,
        r.subset,
        r.system_a,
        r.system_b,
        r.contrast,
        r.measure,
        max(o.mean) AS mean,
        count(*) AS replicates,
        sum(CASE
            WHEN abs(r.units * o.differences - o.units * r.draws)
                >= abs(o.units * r.draws) - {{ tie_margin('o.differences * r.draws') }} THEN 1
            ELSE 0
        END) AS extreme
    FROM models.bootstrap_replicates AS r
    JOIN observed AS o ON o.study = r.study AND o.subset = r.subset AND o.contrast = r.contrast AND o.measure = r.measure
    WHERE r.draws > 0 AND o.differences > 0
    GROUP BY r.study, r.subset, r.system_a, r.system_b, r.contrast, r.measure
)

SELECT
    study,
    subset,
    system_a,
    system_b,
    contrast,
    measure,
    mean,
    replicates,
    extreme,
    (1 + extreme) / (1 + CAST(replicates AS DOUBLE)) AS p_value
FROM tests
