-- name: evidence_coverage
-- version: 1
-- stage: evaluate
-- grain: bundle, method, task_id
-- audits: not_null(bundle, method, task_id, split, requirements, covered, coverage, assignments, redundancy, objective, gained, lost); unique_grain; accepted_range(coverage, 0, 1); accepted_range(redundancy, 0, 1)
-- parameters: bundle = "evidence_demo"
-- description: Seed 000's own measures ("metrics") per method (coverage, dense, typed, oracle) and
--   task, all but the ranked-list nDCG@5 (which models/metrics/ computes): covered = requirements with
--   an agreed obligation in at least one selected document; coverage = covered / all of the task's
--   requirements (not only those the pool can attain). gained / lost: covered requirements that dense
--   does not cover / dense covers and the method does not. redundancy = (assignments - covered) /
--   assignments, assignments being the agreed (document, requirement) pairs of the selection, 0 when
--   there are none. pair_cosine: the mean of max(0, d.e) over the selection's unordered pairs (ten
--   for five documents; NULL for fewer than two). objective: F(S) of the whole selection
--   (coverage_objective).
WITH selections AS (
    SELECT bundle, method, task_id, rank, doc_id FROM models.evidence_selections
    UNION ALL
    SELECT bundle, 'oracle' AS method, task_id, rank, doc_id FROM models.evidence_oracle
),

tasks AS (
    SELECT t.bundle, t.task_id, t.split, t.row_index, count(*) AS requirements
    FROM models.evidence_tasks AS t
    JOIN models.evidence_requirements AS r ON r.bundle = t.bundle AND r.task_id = t.task_id
    WHERE t.bundle = {{ bundle | literal }}
    GROUP BY t.bundle, t.task_id, t.split, t.row_index
),

grid AS (
    SELECT t.bundle, m.method, t.task_id, t.split, t.row_index, t.requirements
    FROM tasks AS t
    CROSS JOIN (SELECT DISTINCT method FROM selections) AS m
),

agreed AS (
    SELECT s.bundle, s.method, s.task_id, s.doc_id, o.requirement
    FROM selections AS s
    JOIN models.evidence_agreed_obligations AS o
        ON o.bundle = s.bundle AND o.task_id = s.task_id AND o.doc_id = s.doc_id
),

covered_requirements AS (
    SELECT DISTINCT bundle, method, task_id, requirement FROM agreed
),

coverage AS (
    SELECT bundle, method, task_id, count(*) AS assignments, count(DISTINCT requirement) AS covered
    FROM agreed
    GROUP BY bundle, method, task_id
),

gained AS (
    SELECT c.bundle, c.method, c.task_id, count(*) AS gained
    FROM covered_requirements AS c
    LEFT JOIN covered_requirements AS d
        ON d.bundle = c.bundle AND d.method = 'dense' AND d.task_id = c.task_id AND d.requirement = c.requirement
    WHERE d.requirement IS NULL
    GROUP BY c.bundle, c.method, c.task_id
),

lost AS (
    SELECT g.bundle, g.method, g.task_id, count(*) AS lost
    FROM grid AS g
    JOIN covered_requirements AS d ON d.bundle = g.bundle AND d.method = 'dense' AND d.task_id = g.task_id
    LEFT JOIN covered_requirements AS c
        ON c.bundle = g.bundle AND c.method = g.method AND c.task_id = g.task_id AND c.requirement = d.requirement
    WHERE c.requirement IS NULL
    GROUP BY g.bundle, g.method, g.task_id
),

pairs AS (
    SELECT a.bundle, a.method, a.task_id, avg(p.positive) AS pair_cosine
    FROM selections AS a
    JOIN selections AS b ON b.bundle = a.bundle AND b.method = a.method AND b.task_id = a.task_id AND b.doc_id > a.doc_id
    JOIN models.evidence_pair_penalties AS p
        ON p.bundle = a.bundle AND p.task_id = a.task_id AND p.doc_a = a.doc_id AND p.doc_b = b.doc_id
    GROUP BY a.bundle, a.method, a.task_id
),

whole_selections AS (
    SELECT bundle, method, task_id, 0 AS k, doc_id FROM selections
),

objectives AS (
    {{ coverage_objective('whole_selections', 'models.evidence_facet_gains', 'models.evidence_pair_penalties') | indent(4) }}
)

SELECT
    g.bundle,
    g.method,
    g.task_id,
    g.split,
    g.row_index AS task_row,
    g.requirements,
    coalesce(c.covered, 0) AS covered,
    coalesce(c.covered, 0) / g.requirements AS coverage,
    coalesce(c.assignments, 0) AS assignments,
    CASE WHEN coalesce(c.assignments, 0) = 0 THEN 0.0 ELSE (c.assignments - c.covered) / c.assignments END
        AS redundancy,
    p.pair_cosine,
    o.objective,
    coalesce(x.gained, 0) AS gained,
    coalesce(y.lost, 0) AS lost
FROM grid AS g
LEFT JOIN coverage AS c ON c.bundle = g.bundle AND c.method = g.method AND c.task_id = g.task_id
LEFT JOIN pairs AS p ON p.bundle = g.bundle AND p.method = g.method AND p.task_id = g.task_id
LEFT JOIN objectives AS o ON o.bundle = g.bundle AND o.method = g.method AND o.task_id = g.task_id
LEFT JOIN gained AS x ON x.bundle = g.bundle AND x.method = g.method AND x.task_id = g.task_id
LEFT JOIN lost AS y ON y.bundle = g.bundle AND y.method = g.method AND y.task_id = g.task_id
