-- name: fusion_rsf
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); accepted_range(score, 0, )
-- description: CombSUM over per-query min-max (the "rsf" comparison of seed 003, section 10): each
--   arm's scores are rescaled to [0, 1] over its own list for the query (an all-equal list maps to
--   1), an arm whose list does not hold the document adds 0, and the rescaled scores are summed.
--   Unique by construction (grouped by its grain).
WITH ranges AS (
    SELECT arm, corpus, query_row, min(score) AS low, max(score) AS high
    FROM models.fusion_candidates
    WHERE listed
    GROUP BY arm, corpus, query_row
)

SELECT
    c.corpus,
    c.query_row,
    c.doc_row,
    sum(CASE
        WHEN NOT c.listed THEN 0
        WHEN r.high = r.low THEN 1
        ELSE (c.score - r.low) / (r.high - r.low)
    END) AS score
FROM models.fusion_candidates AS c
JOIN ranges AS r ON r.arm = c.arm AND r.corpus = c.corpus AND r.query_row = c.query_row
GROUP BY c.corpus, c.query_row, c.doc_row
