-- name: paired_t_tests
-- version: 1
-- stage: evaluate
-- grain: study, subset, contrast, measure
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, queries); unique_grain; accepted_range(p_value, 0, 1); accepted_range(iterations, 1, 9999)
-- description: The paired t-test (Student 1908) of the difference a - b, for each contrast and measure
--   of paired_differences, over each query subset: over the n queries with a difference d_i, the mean
--   d = sum d_i / n (exact, the mean macro), the sum of squares SS = sum (d_i - d)^2 (exact sum), the
--   standard deviation sd = sqrt(SS / (n - 1)), t = d / (sd / sqrt(n)) and df = n - 1, and the
--   two-sided p = P(|T| >= |t|) for T ~ Student's t with df degrees of freedom (the
--   student_t_two_sided macro: I_x(df/2, 1/2) with x = df / (df + t^2), here SS / (SS + n d^2), and
--   1 - x = n d^2 / (SS + n d^2), each without cancellation). scipy.stats.ttest_rel computes the same.
--   Where every difference is 0 (SS = 0, d = 0) t is undefined (scipy: NaN) and p is 1: the systems do
--   not differ on any query; where they differ by the same nonzero amount on every query (SS = 0,
--   d != 0) |t| is infinite and p = 0; t is NULL in both cases. With fewer than 2 differences, t, df and p are NULL.
--   iterations counts the continued fraction's terms (NULL where p is 0 or 1 exactly).
WITH RECURSIVE moments AS (
    SELECT
        study,
        subset,
        system_a,
        system_b,
        contrast,
        measure,
        count(difference) AS queries,
        {{ mean("difference") }} AS mean
    FROM models.paired_differences
    GROUP BY study, subset, system_a, system_b, contrast, measure
),

sums_of_squares AS (
    SELECT
        m.study,
        m.subset,
        m.contrast,
        m.measure,
        {{ exact_sum("(d.difference - m.mean) * (d.difference - m.mean)") }} AS ss
    FROM models.paired_differences AS d
    JOIN moments AS m ON m.study = d.study AND m.subset = d.subset AND m.contrast = d.contrast AND m.measure = d.measure
    GROUP BY m.study, m.subset, m.contrast, m.measure
),

statistics AS (
    SELECT
        m.study,
        m.subset,
        m.system_a,
        m.system_b,
        m.contrast,
        m.measure,
        m.queries,
        m.mean,
        s.ss,
        CASE WHEN m.queries >= 2 THEN sqrt(s.ss / (m.queries - 1)) END AS sd,
        CASE WHEN m.queries >= 2 THEN m.queries - 1 END AS df,
        CASE
            WHEN m.queries < 2 OR s.ss = 0 THEN NULL
            ELSE m.mean / sqrt(s.ss / (m.queries - 1) / m.queries)
        END AS t
    FROM moments AS m
    JOIN sums_of_squares AS s ON s.study = m.study AND s.subset = m.subset AND s.contrast = m.contrast AND s.measure = m.measure
),

-- x = df / (df + t^2) and y = t^2 / (df + t^2), from SS and n d^2 (t^2 = df n d^2 / SS)
t_arguments AS (
    SELECT
        study,
        subset,
        contrast,
        measure,
        df,
        ss / (ss + queries * mean * mean) AS x,
        queries * mean * mean / (ss + queries * mean * mean) AS y
    FROM statistics
    WHERE df IS NOT NULL AND ss + queries * mean * mean > 0
),

{{ student_t_two_sided("two_sided", "t_arguments", ["study", "subset", "contrast", "measure"]) }}

SELECT
    s.study,
    s.subset,
    s.system_a,
    s.system_b,
    s.contrast,
    s.measure,
    s.queries,
    s.mean,
    s.sd,
    s.t,
    s.df,
    CASE WHEN s.df IS NULL THEN NULL WHEN s.ss = 0 AND s.mean = 0 THEN CAST(1 AS DOUBLE) ELSE p.value END AS p_value,
    p.iterations
FROM statistics AS s
LEFT JOIN two_sided AS p
    ON p.study = s.study AND p.subset = s.subset AND p.contrast = s.contrast AND p.measure = s.measure
