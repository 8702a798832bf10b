-- name: separation_acceptance
-- version: 1
-- stage: evaluate
-- grain: arm
-- audits: not_null(arm, null_units, relevant_units, threshold, j_hat, epsilon_null, epsilon_relevant, j_lower, j_min, accepted); unique_grain; accepted_range(j_hat, 0, 1); at_least_one_row
-- parameters: dkw_delta = 0.05, j_min = 0.2
-- columns: null_units = "m0: independent null observations, one per query (its held-out non-relevant
--   document that comes first in the calibration order)", relevant_units = "m1: independent relevant
--   observations, one per query (its relevant document that comes first in the calibration order)",
--   threshold = "t-hat: the score that maximises J-hat (the lowest such score); admitted means above it",
--   j_hat = "J-hat(t-hat) = F0-hat(t-hat) - F1-hat(t-hat), the largest separation", epsilon_null =
--   "sqrt(ln(4/delta) / 2 m0)", epsilon_relevant = "sqrt(ln(4/delta) / 2 m1)", j_lower = "J-hat(t-hat) -
--   epsilon_null - epsilon_relevant: with probability at least 1 - delta a lower bound on J(t-hat) (eq.
--   26)", j_min = "The declared policy J_min", accepted = "j_lower >= j_min (eq. 26's acceptance rule)"
-- description: Eq. 26's acceptance rule for a separation threshold (seed 003, section 7) on each arm's raw
--   score and on the mixture's S, with DKW margins counted in independent units: one null and one relevant
--   observation per query (the first in the seeded calibration order: thousands of overlapping pairs are
--   not thousands of observations), so m0 and m1 are numbers of queries. J(t) = F0(t) - F1(t), the null
--   scores at or below t minus the relevant ones; t-hat maximises the empirical J over every observed
--   score (both distribution functions with ties together), the union bound of two DKW bounds gives
--   |J-hat - J| <= epsilon_0 + epsilon_1 uniformly, and the threshold is accepted when J-hat(t-hat) -
--   epsilon_0 - epsilon_1 >= J_min (0.2: declared policy, not a mathematical boundary).
WITH first_null AS (
    SELECT arm, query_row, score, 0 AS relevant
    FROM (
        SELECT arm, query_row, score, row_number() OVER (PARTITION BY arm, query_row ORDER BY calibration_position) AS taken
        FROM models.calibration_scores
        WHERE held_out AND NOT relevant
    ) AS ordered
    WHERE taken = 1
),

first_relevant AS (
    SELECT arm, query_row, score, 1 AS relevant
    FROM (
        SELECT arm, query_row, score, row_number() OVER (PARTITION BY arm, query_row ORDER BY calibration_position) AS taken
        FROM models.calibration_scores
        WHERE relevant
    ) AS ordered
    WHERE taken = 1
),

observations AS (
    SELECT * FROM first_null
    UNION ALL
    SELECT * FROM first_relevant
),

distribution_functions AS (
    SELECT
        arm,
        score,
        sum(1 - relevant) OVER (PARTITION BY arm ORDER BY score RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS null_at_or_below,
        sum(relevant) OVER (PARTITION BY arm ORDER BY score RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS relevant_at_or_below,
        sum(1 - relevant) OVER (PARTITION BY arm) AS null_units,
        sum(relevant) OVER (PARTITION BY arm) AS relevant_units
    FROM observations
),

separations AS (
    SELECT
        arm,
        score,
        null_units,
        relevant_units,
        null_at_or_below / null_units - relevant_at_or_below / relevant_units AS j,
        row_number() OVER (
            PARTITION BY arm ORDER BY null_at_or_below / null_units - relevant_at_or_below / relevant_units DESC, score
        ) AS best
    FROM distribution_functions
),

chosen AS (
    SELECT
        arm,
        null_units,
        relevant_units,
        score AS threshold,
        j AS j_hat,
        sqrt(ln(4 / {{ dkw_delta }}) / (2 * null_units)) AS epsilon_null,
        sqrt(ln(4 / {{ dkw_delta }}) / (2 * relevant_units)) AS epsilon_relevant
    FROM separations
    WHERE best = 1
)

SELECT
    arm,
    null_units,
    relevant_units,
    threshold,
    j_hat,
    epsilon_null,
    epsilon_relevant,
    j_hat - epsilon_null - epsilon_relevant AS j_lower,
    CAST({{ j_min }} AS DOUBLE) AS j_min,
    j_hat - epsilon_null - epsilon_relevant >= {{ j_min }} AS accepted
FROM chosen
