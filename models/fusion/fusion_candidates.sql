-- name: fusion_candidates
-- version: 2
-- stage: prepare
-- grain: arm, corpus, query_row, doc_row
-- audits: not_null(arm, corpus, query_row, doc_row, score, rank, listed); unique_grain; accepted_range(score, , ); at_least_one_row
-- parameters: candidate_depth = 100
-- columns: listed = "Whether the document is within this arm's own first candidate_depth (what list-based
--   rules such as RRF see)"
-- description: The bounded candidate union (seed 003, section 8): per query, every document in the
--   first candidate_depth of any arm, with every arm's score and full-ranking rank on it, so that no
--   retrieval arm is missing on a candidate (missing is not non-matching; an arm read from a run
--   file has no row where its file has no score). listed = within that arm's own first
--   candidate_depth (what list-based rules such as RRF see).
WITH ranked AS MATERIALIZED (
    SELECT arm, corpus, query_row, doc_row, score, rank
    FROM models.fusion_arms
),

within_depth AS (
    SELECT corpus, query_row, doc_row
    FROM ranked
    WHERE rank <= {{ candidate_depth }}
)

-- Every arm's row of each document that some arm lists: a semi-join, so the union needs no DISTINCT. A row
-- within its own arm's depth is in the union by itself, so only the rows beyond it are looked up.
SELECT arm, corpus, query_row, doc_row, score, rank, TRUE AS listed
FROM ranked
WHERE rank <= {{ candidate_depth }}
UNION ALL
SELECT r.arm, r.corpus, r.query_row, r.doc_row, r.score, r.rank, FALSE AS listed
FROM ranked AS r
WHERE r.rank > {{ candidate_depth }} AND EXISTS (
    SELECT 1 FROM within_depth AS w WHERE w.corpus = r.corpus AND w.query_row = r.query_row AND w.doc_row = r.doc_row
)
