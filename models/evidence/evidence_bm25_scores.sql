-- name: evidence_bm25_scores
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, doc_id
-- audits: not_null(bundle, task_id, doc_id, score); unique_grain; accepted_range(score, 0, )
-- parameters: bundle = "evidence_demo", k1 = 1.2, b = 0.75
-- description: BM25 of a task's question against every member of its pool, for the typed comparator
--   (docs/evidence_bundle.md): the project's BM25 (seed 004: lowercase [\pL\pN]+ terms, no stemming,
--   idf = ln(1 + (N - df + 0.5) / (df + 0.5)), k1, b), with N, df and the average length taken over
--   all of the bundle's documents; a repeated question term counts once. Each term's share is
--   rounded to 1e-12 and added as an integer, so equal statistics give exactly equal scores.
WITH documents AS (
    SELECT doc_id, text FROM raw.evidence_documents WHERE bundle = {{ bundle | literal }}
),

tokens AS (
    SELECT doc_id, unnest(regexp_extract_all(lower(text), '[\pL\pN]+')) AS term
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
    SELECT f.term, ln(1 + (c.documents - count(*) + 0.5) / (count(*) + 0.5)) AS idf
    FROM frequencies AS f
    CROSS JOIN collection AS c
    GROUP BY f.term, c.documents
),

question_terms AS (
    SELECT DISTINCT task_id, unnest(regexp_extract_all(lower(question), '[\pL\pN]+')) AS term
    FROM raw.evidence_tasks
    WHERE bundle = {{ bundle | literal }}
),

pool AS (
    SELECT bundle, task_id, doc_id FROM raw.evidence_pools WHERE bundle = {{ bundle | literal }}
),

shares AS (
    SELECT
        p.task_id,
        p.doc_id,
        CAST(round(
            s.idf * f.tf * ({{ k1 }} + 1)
            / (f.tf + {{ k1 }} * (1 - {{ b }} + {{ b }} * l.length / c.average_length)) * 1e12
        ) AS BIGINT) AS share
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
