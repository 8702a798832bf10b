-- name: arm_error_rates
-- version: 1
-- stage: evaluate
-- grain: arm, level, error
-- audits: not_null(arm, level, error, clusters, numerator, denominator, ratio); unique_grain; accepted_range(ratio, 0, 1); at_least_one_row
-- parameters: calibration_levels = [0.01, 0.05, 0.1]
-- columns: level = "The predeclared level alpha: an arm votes for a candidate when its p-value is at most
--   alpha", error = "false_admission: P(p_a <= alpha | not relevant); missed: P(p_a > alpha | relevant);
--   lone_distractor: P(p_a <= alpha and the other arm's p > alpha | not relevant); lone_correction:
--   P(p_a <= alpha and the other arm's p > alpha | relevant)", clusters = "Queries that have candidates of
--   the class", numerator = "Candidates with the error", denominator = "Candidates of the class", ratio =
--   "numerator / denominator", standard_error = "The ratio's standard error by query clusters"
-- description: Per-arm conditional error rates among the complete candidates of the judged queries (seed
--   003, section 9: the relevance model), at each predeclared level: an arm's false admissions
--   (non-relevant candidates it calls extreme), its misses (relevant ones it does not), and the errors and
--   corrections the other arm does not share (lone distractors: a non-relevant candidate extreme on this arm
--   only, which the mixture's single tilt lets outrank a dense hit; lone corrections: a relevant candidate
--   only this arm finds). Each with its 95% interval by query clusters (cluster_ratio).
WITH levels AS (
    {%- for level in calibration_levels %}
    SELECT CAST({{ level }} AS DOUBLE) AS level{{ " UNION ALL" if not loop.last }}
    {%- endfor %}
),

relevant AS (
    SELECT DISTINCT query_key AS query_row, doc_key AS doc_row
    FROM models.judgments
    WHERE grade > 0
),

candidates AS (
    SELECT
        p.arm,
        p.query_row,
        p.doc_row,
        p.p,
        o.p AS other_p,
        r.doc_row IS NOT NULL AS relevant
    FROM models.arm_p_values AS p
    JOIN models.arm_p_values AS o
        ON o.arm <> p.arm AND o.corpus = p.corpus AND o.query_row = p.query_row AND o.doc_row = p.doc_row
    LEFT JOIN relevant AS r ON r.query_row = p.query_row AND r.doc_row = p.doc_row
    WHERE p.query_row IN (SELECT query_key FROM models.judgments)
),

per_query AS (
    SELECT
        c.arm,
        l.level,
        c.query_row,
        count(*) FILTER (WHERE NOT c.relevant) AS irrelevant,
        count(*) FILTER (WHERE c.relevant) AS relevant,
        count(*) FILTER (WHERE NOT c.relevant AND c.p <= l.level) AS false_admission,
        count(*) FILTER (WHERE c.relevant AND c.p > l.level) AS missed,
        count(*) FILTER (WHERE NOT c.relevant AND c.p <= l.level AND c.other_p > l.level) AS lone_distractor,
        count(*) FILTER (WHERE c.relevant AND c.p <= l.level AND c.other_p > l.level) AS lone_correction
    FROM candidates AS c
    CROSS JOIN levels AS l
    GROUP BY c.arm, l.level, c.query_row
),

rates AS (
    SELECT arm, level, 'false_admission' AS error, query_row, false_admission AS numerator, irrelevant AS denominator FROM per_query
    UNION ALL
    SELECT arm, level, 'missed', query_row, missed, relevant FROM per_query
    UNION ALL
    SELECT arm, level, 'lone_distractor', query_row, lone_distractor, irrelevant FROM per_query
    UNION ALL
    SELECT arm, level, 'lone_correction', query_row, lone_correction, relevant FROM per_query
),

{{ cluster_ratio('intervals', 'rates', ['arm', 'level', 'error']) }}

SELECT arm, level, error, clusters, numerator, denominator, ratio, standard_error, ci_low, ci_high
FROM intervals
