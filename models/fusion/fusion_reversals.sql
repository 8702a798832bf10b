-- name: fusion_reversals
-- version: 2
-- stage: evaluate
-- grain: rule, corpus, query_row
-- audits: not_null(rule, corpus, query_row, dense_correct_reversed, dense_wrong_corrected); unique_grain
-- description: Pairwise reversals against the dense arm (seed 003, eq. 15 and 16), per rule and query,
--   over (relevant, irrelevant) pairs of candidates: pairs the dense arm orders correctly that the rule
--   reverses, and pairs the dense arm gets wrong that the rule puts right.
WITH ranked AS (
    SELECT r.rule, r.corpus, r.query_row, r.doc_row, r.rank, d.rank AS dense_rank, j.grade IS NOT NULL AS relevant
    FROM models.fused_rankings AS r
    JOIN models.fused_rankings AS d
        ON d.rule = 'dense' AND d.corpus = r.corpus AND d.query_row = r.query_row AND d.doc_row = r.doc_row
    LEFT JOIN models.judgments AS j
        ON j.query_key = r.query_row AND j.doc_key = r.doc_row AND j.grade > 0
    WHERE r.rule <> 'dense'
)

SELECT
    g.rule,
    g.corpus,
    g.query_row,
    count(*) FILTER (WHERE g.dense_rank < b.dense_rank AND g.rank > b.rank) AS dense_correct_reversed,
    count(*) FILTER (WHERE g.dense_rank > b.dense_rank AND g.rank < b.rank) AS dense_wrong_corrected
FROM ranked AS g
JOIN ranked AS b ON b.rule = g.rule AND b.corpus = g.corpus AND b.query_row = g.query_row AND NOT b.relevant
WHERE g.relevant
GROUP BY g.rule, g.corpus, g.query_row
