-- name: evidence_greedy
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, rank
-- audits: not_null(bundle, task_id, rank, doc_id); unique_grain; accepted_range(rank, 1, ); at_least_one_row
-- parameters: bundle = "evidence_demo", budget = 5
-- functions: evidence_greedy
-- dialect: duckdb: calls the Python greedy-selection function
-- description: Seed 000's greedy selection ("selection"): per task, the UDF evidence_greedy
--   (rankhouse/studies/evidence/select.py, registered by the study's package) gets the pool's doc_ids
--   in ascending order, the normalised gains g(f, d) (one list per facet, in doc_id order), the pair
--   penalties p(d, e) (a doc x doc matrix in doc_id order, 0 on the diagonal) and the budget, and returns
--   `budget` doc_ids: each step adds the unselected member with the largest F(S + d) - F(S), exact ties
--   to the smaller doc_id. The selection order is the rank. The UDF checks the program hash recorded in models.evidence_programs.
WITH members AS (
    SELECT bundle, task_id, doc_id
    FROM models.evidence_pools
    WHERE bundle = {{ bundle | literal }}
),

facet_rows AS (
    SELECT bundle, task_id, facet, list(gain ORDER BY doc_id) AS gains
    FROM models.evidence_facet_gains
    GROUP BY bundle, task_id, facet
),

gain_matrices AS (
    SELECT bundle, task_id, list(gains ORDER BY facet) AS gains
    FROM facet_rows
    GROUP BY bundle, task_id
),

ordered_pairs AS (
    SELECT a.bundle, a.task_id, a.doc_id AS doc_a, b.doc_id AS doc_b, coalesce(p.penalty, 0.0) AS penalty
    FROM members AS a
    JOIN members AS b ON b.bundle = a.bundle AND b.task_id = a.task_id
    LEFT JOIN models.evidence_pair_penalties AS p
        ON p.bundle = a.bundle AND p.task_id = a.task_id
        AND p.doc_a = least(a.doc_id, b.doc_id) AND p.doc_b = greatest(a.doc_id, b.doc_id)
),

penalty_rows AS (
    SELECT bundle, task_id, doc_a, list(penalty ORDER BY doc_b) AS penalties
    FROM ordered_pairs
    GROUP BY bundle, task_id, doc_a
),

penalty_matrices AS (
    SELECT bundle, task_id, list(doc_a ORDER BY doc_a) AS doc_ids, list(penalties ORDER BY doc_a) AS penalties
    FROM penalty_rows
    GROUP BY bundle, task_id
),

program AS (
    SELECT max(sha256) AS sha256 FROM models.evidence_programs WHERE program = 'evidence_greedy'
),

selections AS (
    SELECT
        p.bundle,
        p.task_id,
        evidence_greedy(p.doc_ids, g.gains, p.penalties, {{ budget }}, r.sha256) AS selected
    FROM penalty_matrices AS p
    JOIN gain_matrices AS g ON g.bundle = p.bundle AND g.task_id = p.task_id
    CROSS JOIN program AS r
)

SELECT bundle, task_id, generate_subscripts(selected, 1) AS rank, unnest(selected) AS doc_id
FROM selections
