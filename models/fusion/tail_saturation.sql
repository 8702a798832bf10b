-- name: tail_saturation
-- version: 1
-- stage: prepare
-- grain: arm, corpus
-- audits: not_null(arm, corpus, candidates, at_floor, share_at_floor); unique_grain; accepted_range(share_at_floor, 0, 1)
-- description: How far a finite reference panel saturates its tail (seed 003, sections 6 and 9): per
--   arm, the candidates whose score beats every reference score, so that p sits at its floor
--   1/(m + 1) and the arm can no longer tell them apart; arm 'all' counts the candidates at the
--   floor in every arm, whose p-value rules then tie and are ordered by the dense score.
WITH floors AS (
    SELECT arm, corpus, query_row, doc_row, p = 1 / (reference_size + 1) AS at_floor
    FROM models.arm_p_values
),

every_arm AS (
    SELECT 'all' AS arm, corpus, query_row, doc_row, bool_and(at_floor) AS at_floor
    FROM floors
    GROUP BY corpus, query_row, doc_row
),

scored_rows AS (
    SELECT arm, corpus, at_floor FROM floors
    UNION ALL
    SELECT arm, corpus, at_floor FROM every_arm
)

SELECT
    arm,
    corpus,
    count(*) AS candidates,
    count(*) FILTER (WHERE at_floor) AS at_floor,
    avg(CASE WHEN at_floor THEN 1 ELSE 0 END) AS share_at_floor
FROM scored_rows
GROUP BY arm, corpus
