-- name: evidence_examples
-- version: 1
-- stage: evaluate
-- grain: bundle, task_id, method, rank
-- audits: not_null(bundle, task_id, method, rank, doc_id, text); unique_grain
-- parameters: bundle = "evidence_demo", example_tasks = ["T18", "T21"]
-- description: The named example tasks shown in full whatever the results (seed 000: "A21/B18 shown
--   regardless of results"; for the demonstration bundle two tasks fixed in the protocol before any
--   run): every method's selection with each document's text, both judges' grades and obligations
--   (requirement indices, comma-separated), the agreed obligations, and the step's objective gain
--   F(S_k) - F(S_(k-1)) for the label-free methods.
WITH selections AS (
    SELECT bundle, method, task_id, rank, doc_id FROM models.evidence_selections
    UNION ALL
    SELECT bundle, 'oracle' AS method, task_id, rank, doc_id FROM models.evidence_oracle
),

obligations AS (
    SELECT
        task_id,
        doc_id,
        string_agg(CASE WHEN judge = 'A' THEN CAST(requirement AS VARCHAR) END, ',' ORDER BY requirement)
            AS obligations_a,
        string_agg(CASE WHEN judge = 'B' THEN CAST(requirement AS VARCHAR) END, ',' ORDER BY requirement)
            AS obligations_b
    FROM models.evidence_obligations
    WHERE bundle = {{ bundle | literal }} AND task_id IN {{ example_tasks | literal }}
    GROUP BY task_id, doc_id
),

agreed AS (
    SELECT task_id, doc_id, string_agg(CAST(requirement AS VARCHAR), ',' ORDER BY requirement) AS agreed
    FROM models.evidence_agreed_obligations
    WHERE task_id IN {{ example_tasks | literal }}
    GROUP BY task_id, doc_id
)

SELECT
    s.bundle,
    s.task_id,
    s.method,
    s.rank,
    s.doc_id,
    d.text,
    l.grade_a,
    l.grade_b,
    l.mean_grade,
    coalesce(o.obligations_a, '') AS obligations_a,
    coalesce(o.obligations_b, '') AS obligations_b,
    coalesce(a.agreed, '') AS agreed,
    f.gain AS step_gain
FROM selections AS s
JOIN models.evidence_documents AS d ON d.bundle = s.bundle AND d.doc_id = s.doc_id
JOIN models.evidence_pair_labels AS l ON l.bundle = s.bundle AND l.task_id = s.task_id AND l.doc_id = s.doc_id
LEFT JOIN obligations AS o ON o.task_id = s.task_id AND o.doc_id = s.doc_id
LEFT JOIN agreed AS a ON a.task_id = s.task_id AND a.doc_id = s.doc_id
LEFT JOIN models.evidence_objective AS f
    ON f.bundle = s.bundle AND f.method = s.method AND f.task_id = s.task_id AND f.rank = s.rank
WHERE s.task_id IN {{ example_tasks | literal }}
