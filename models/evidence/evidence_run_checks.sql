-- name: evidence_run_checks
-- version: 1
-- stage: prepare
-- grain: bundle, method, task_id
-- audits: not_null(bundle, method, task_id, source, listed, outside_pool, disagreements, problems); unique_grain; accepted_range(problems, 0, 0); at_least_one_row
-- parameters: bundle = "evidence_demo", budget = 5
-- description: Blocking checks of the comparator runs, per method and task (seed 000, "baseline":
--   both top fives lie within every judged pool; the dense top five is verified against a
--   descending-score dense selection within the same pool, doc_id ties ascending). `listed` counts
--   the run's documents for the task, `outside_pool` its top `budget` documents that are not pool
--   members, `disagreements` (dense only) the ranks 1 .. min(budget, pool size) at which the run's
--   document differs from the reference selection, here ranked by counting the members that beat
--   each one (a formulation independent of the run's row_number). A missing task counts as a
--   problem; any problem stops the study.
WITH tasks AS (
    SELECT t.bundle, t.task_id, count(*) AS pool_size
    FROM models.evidence_tasks AS t
    JOIN models.evidence_pools AS p ON p.bundle = t.bundle AND p.task_id = t.task_id
    WHERE t.bundle = {{ bundle | literal }}
    GROUP BY t.bundle, t.task_id
),

methods AS (
    SELECT 'dense' AS method
    UNION ALL
    SELECT 'typed' AS method
),

reference AS (
    SELECT a.bundle, a.task_id, a.doc_id, 1 + count(b.doc_id) AS rank
    FROM models.evidence_comparator_scores AS a
    LEFT JOIN models.evidence_comparator_scores AS b
        ON b.bundle = a.bundle AND b.task_id = a.task_id
        AND (b.dense > a.dense OR (b.dense = a.dense AND b.doc_id < a.doc_id))
    GROUP BY a.bundle, a.task_id, a.doc_id
),

runs AS (
    SELECT
        r.bundle,
        r.method,
        r.task_id,
        max(r.source) AS source,
        count(*) AS listed,
        count(*) FILTER (WHERE r.rank <= {{ budget }} AND p.doc_id IS NULL) AS outside_pool
    FROM models.evidence_runs AS r
    LEFT JOIN models.evidence_pools AS p ON p.bundle = r.bundle AND p.task_id = r.task_id AND p.doc_id = r.doc_id
    GROUP BY r.bundle, r.method, r.task_id
),

disagreements AS (
    SELECT
        f.bundle,
        f.task_id,
        count(*) FILTER (WHERE r.doc_id IS NULL OR r.doc_id <> f.doc_id) AS disagreements
    FROM reference AS f
    JOIN tasks AS t ON t.bundle = f.bundle AND t.task_id = f.task_id
    LEFT JOIN models.evidence_runs AS r
        ON r.bundle = f.bundle AND r.task_id = f.task_id AND r.method = 'dense' AND r.rank = f.rank
    WHERE f.rank <= least({{ budget }}, t.pool_size)
    GROUP BY f.bundle, f.task_id
),

checked AS (
    SELECT
        t.bundle,
        m.method,
        t.task_id,
        coalesce(r.source, 'missing') AS source,
        coalesce(r.listed, 0) AS listed,
        coalesce(r.outside_pool, 0) AS outside_pool,
        CASE WHEN m.method = 'dense' THEN coalesce(d.disagreements, 0) ELSE 0 END AS disagreements,
        CASE WHEN coalesce(r.listed, 0) < least({{ budget }}, t.pool_size) THEN 1 ELSE 0 END AS short
    FROM tasks AS t
    CROSS JOIN methods AS m
    LEFT JOIN runs AS r ON r.bundle = t.bundle AND r.task_id = t.task_id AND r.method = m.method
    LEFT JOIN disagreements AS d ON d.bundle = t.bundle AND d.task_id = t.task_id
)

SELECT
    bundle,
    method,
    task_id,
    source,
    listed,
    outside_pool,
    disagreements,
    outside_pool + disagreements + short AS problems
FROM checked
