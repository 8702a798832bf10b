-- name: arm_p_values
-- version: 2
-- stage: prepare
-- grain: arm, corpus, query_row, doc_row
-- audits: not_null(arm, corpus, query_row, doc_row, score, exceedances, p, reference_size); accepted_range(p, 0, 1)
-- description: The inclusive exceedance p-value of each candidate's score on each arm against that
--   arm's null reference for the query (seed 003, eq. 1): p = (1 + #{reference scores >= s}) / (m + 1),
--   never below 1/(m + 1) (no zero tails); exceedances is its numerator 1 + #{reference scores >= s},
--   an exact integer. Reference scores sort before candidate scores on equal values, so that >= counts
--   the ties; equal raw scores get equal p-values. One row per row of fusion_candidates, whose grain
--   (the same) is audited there, so it is not audited again.
WITH pooled AS (
    SELECT arm, corpus, query_row, score, 1 AS is_reference, CAST(NULL AS BIGINT) AS doc_row
    FROM models.null_references
    UNION ALL
    SELECT arm, corpus, query_row, score, 0 AS is_reference, doc_row
    FROM models.fusion_candidates
),

counted AS (
    SELECT
        arm,
        corpus,
        query_row,
        doc_row,
        score,
        is_reference,
        sum(is_reference) OVER (
            PARTITION BY arm, corpus, query_row
            ORDER BY score DESC, is_reference DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS references_at_or_above,
        sum(is_reference) OVER (PARTITION BY arm, corpus, query_row) AS reference_size
    FROM pooled
)

SELECT
    arm,
    corpus,
    query_row,
    doc_row,
    score,
    1 + references_at_or_above AS exceedances,
    (1 + references_at_or_above) / (reference_size + 1) AS p,
    reference_size
FROM counted
WHERE is_reference = 0
