-- name: evidence_bm25_scores
-- version: 2
-- stage: prepare
-- grain: bundle, task_id, doc_id
-- audits: not_null(bundle, task_id, doc_id, score); unique_grain; accepted_range(score, 0, )
-- parameters: bundle = "evidence_demo", k1 = 1.2, b = 0.75
-- description: BM25 of a task's question against every member of its pool, for the typed comparator
--   (docs/evidence_bundle.md): the project's BM25 (seed 004, the macros of sql/macros/bm25.sql: terms,
--   bm25_idf, bm25_weight_units) with N, df and the average length taken over all of the bundle's
--   documents; a repeated question term counts once. Shares in whole 1e-12 units add exactly, so equal
--   statistics give exactly equal scores.
WITH documents AS (
    SELECT doc_id, text FROM models.evidence_documents WHERE bundle = {{ bundle | literal }}
),

tokens AS (
    SELECT doc_id, unnest({{ terms('text') }}) AS term
    FROM documents
),

frequencies AS (
    SELECT doc_id, term, count(*) AS tf
    FROM tokens
    GROUP BY doc_id, term
),

lengths AS (
    SELECT d.doc_id, count(t.term) AS length
    FROM documents AS d
    LEFT JOIN tokens AS t ON t.doc_id = d.doc_id
    GROUP BY d.doc_id
),

collection AS (
    SELECT count(*) AS documents, sum(length) / count(*) AS average_length
    FROM lengths
),

terms AS (
    SELECT f.term, {{ bm25_idf('c.documents', 'count(*)') }} AS idf
    FROM frequencies AS f
    CROSS JOIN collection AS c
    GROUP BY f.term, c.documents
),

question_terms AS (
    SELECT DISTINCT task_id, unnest({{ terms('question') }}) AS term
    FROM models.evidence_tasks
    WHERE bundle = {{ bundle | literal }}
),

pool AS (
    SELECT bundle, task_id, doc_id FROM models.evidence_pools WHERE bundle = {{ bundle | literal }}
),

shares AS (
    SELECT
        p.task_id,
        p.doc_id,
        {{ bm25_weight_units('s.idf', 'f.tf', 'l.length', 'c.average_length', k1, b) | indent(8) }} AS share
    FROM pool AS p
    JOIN question_terms AS q ON q.task_id = p.task_id
    JOIN frequencies AS f ON f.doc_id = p.doc_id AND f.term = q.term
    JOIN terms AS s ON s.term = q.term
    JOIN lengths AS l ON l.doc_id = p.doc_id
    CROSS JOIN collection AS c
),

totals AS (
    SELECT task_id, doc_id, sum(share) AS total
    FROM shares
    GROUP BY task_id, doc_id
)

SELECT p.bundle, p.task_id, p.doc_id, coalesce(t.total, 0) / 1e12 AS score
FROM pool AS p
LEFT JOIN totals AS t ON t.task_id = p.task_id AND t.doc_id = p.doc_id
