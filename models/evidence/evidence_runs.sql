-- name: evidence_runs
-- version: 1
-- stage: prepare
-- grain: bundle, method, task_id, rank
-- audits: not_null(bundle, method, task_id, rank, doc_id, score, source); unique_grain; accepted_range(rank, 1, ); at_least_one_row
-- parameters: bundle = "evidence_demo", dense_run = "", typed_run = ""
-- description: The comparator runs `dense` and `typed` (seed 000, "baseline"), label-free and frozen.
--   Computed: every pool member by score descending, exact ties by doc_id ascending. Supplied: when
--   the protocol names a loaded TREC run (dense_run, typed_run: run ids in models.runs, qid = task_id),
--   that run's rows for the bundle's tasks in the order written (rank, then score descending, then
--   docno ascending); evidence_run_checks verifies a supplied dense run against the computed dense
--   selection and that every supplied top five lies within the pool.
WITH computed AS (
    SELECT bundle, 'dense' AS method, task_id, doc_id, dense AS score
    FROM models.evidence_comparator_scores
    WHERE {{ dense_run | literal }} = ''
    UNION ALL
    SELECT bundle, 'typed' AS method, task_id, doc_id, typed AS score
    FROM models.evidence_comparator_scores
    WHERE {{ typed_run | literal }} = ''
),

supplied AS (
    SELECT
        t.bundle,
        CASE WHEN r.run_id = {{ dense_run | literal }} THEN 'dense' ELSE 'typed' END AS method,
        r.qid AS task_id,
        r.docno AS doc_id,
        r.score,
        r.rank AS written_rank
    FROM models.runs AS r
    JOIN models.evidence_tasks AS t ON t.task_id = r.qid
    WHERE t.bundle = {{ bundle | literal }} AND r.run_id IN ({{ dense_run | literal }}, {{ typed_run | literal }})
        AND r.run_id <> ''
)

SELECT
    bundle,
    method,
    task_id,
    row_number() OVER (PARTITION BY bundle, method, task_id ORDER BY {{ seed_order('score', 'doc_id') }}) AS rank,
    doc_id,
    score,
    'computed' AS source
FROM computed

UNION ALL

SELECT
    bundle,
    method,
    task_id,
    row_number() OVER (PARTITION BY bundle, method, task_id ORDER BY written_rank, {{ seed_order('score', 'doc_id') }}) AS rank,
    doc_id,
    score,
    'supplied' AS source
FROM supplied
