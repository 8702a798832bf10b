-- name: class_results
-- version: 1
-- stage: evaluate
-- grain: method, corpus, class
-- audits: not_null(method, corpus, class, documents, queries, top1_hits); unique_grain
-- description: Per class (intent) and method: documents and queries of the class and the queries
--   whose first document is of their class (seed 004: per-intent counts).
WITH documents AS (
    SELECT corpus, class, count(*) AS documents
    FROM gate.document_classes
    GROUP BY corpus, class
)

SELECT m.method, m.corpus, m.class, coalesce(d.documents, 0) AS documents, count(*) AS queries, sum(m.top1) AS top1_hits
FROM models.retrieval_query_metrics AS m
LEFT JOIN documents AS d ON d.corpus = m.corpus AND d.class = m.class
GROUP BY m.method, m.corpus, m.class, d.documents
