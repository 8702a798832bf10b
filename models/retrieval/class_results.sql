-- name: class_results
-- version: 2
-- stage: evaluate
-- grain: method, corpus, class
-- audits: not_null(method, corpus, class, documents, queries, top1_hits); unique_grain
-- parameters: corpus = "banking77"
-- description: Per class (intent) and method: documents and queries of the class and the queries
--   whose first document is of their class (seed 004: per-intent counts), from query_measures' Top-1.
WITH documents AS (
    SELECT corpus, class, count(*) AS documents
    FROM models.document_classes
    WHERE corpus = {{ corpus | literal }}
    GROUP BY corpus, class
)

SELECT
    m.system AS method,
    c.corpus,
    c.class,
    coalesce(d.documents, 0) AS documents,
    count(*) AS queries,
    CAST(sum(m.value) AS BIGINT) AS top1_hits
FROM models.query_measures AS m
JOIN models.query_classes AS c ON c.corpus = {{ corpus | literal }} AND c.qid = m.query
LEFT JOIN documents AS d ON d.corpus = c.corpus AND d.class = c.class
WHERE m.measure = 'Top-1'
GROUP BY m.system, c.corpus, c.class, d.documents
