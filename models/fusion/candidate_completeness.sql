-- name: candidate_completeness
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, arms_scored, arms, complete); accepted_range(arms_scored, 1, )
-- description: Whether every arm scored the candidate (seed 003, section 8: missing is not
--   non-matching). The arms are fixed by configuration, as every arm fusion reads for the corpus, never
--   by the lists that happened to return the row. The p-value rules score complete candidates only and
--   declare the others incomplete. In a study every arm scores every candidate; fusing run files, a
--   document absent from one arm's file is incomplete. Unique by construction (grouped by its grain).
WITH configured_arms AS (
    SELECT corpus, count(DISTINCT arm) AS arms
    FROM models.fusion_candidates
    GROUP BY corpus
),

scored_arms AS (
    SELECT corpus, query_row, doc_row, count(*) AS arms_scored
    FROM models.fusion_candidates
    GROUP BY corpus, query_row, doc_row
)

SELECT s.corpus, s.query_row, s.doc_row, s.arms_scored, c.arms, s.arms_scored = c.arms AS complete
FROM scored_arms AS s
JOIN configured_arms AS c ON c.corpus = s.corpus
