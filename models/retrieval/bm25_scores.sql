-- name: bm25_scores
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- parameters: k1 = 1.2, b = 0.75, corpus = "banking77"
-- materialized: view
-- description: BM25 (seed 004) of every (query, document) pair of a corpus: the sum over the query's
--   distinct terms t that the document contains of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
--   length / average_length)); 0 when they share no term. Each term's share is rounded to 1e-12 and
--   added as an integer, so that a score cannot depend on the order in which threads add the terms:
--   documents with equal statistics get exactly equal scores, and the tie rule decides. One corpus
--   (the parameter) at a time.
WITH shares AS (
    SELECT
        q.query_row,
        d.doc_row,
        CAST(round(
            s.idf * d.tf * ({{ k1 }} + 1)
            / (d.tf + {{ k1 }} * (1 - {{ b }} + {{ b }} * d.length / c.average_length)) * 1e12
        ) AS BIGINT) AS share
    FROM models.query_tokens AS q
    JOIN models.document_tokens AS d ON d.term = q.term
    JOIN models.bm25_terms AS s ON s.term = q.term
    CROSS JOIN models.bm25_collection AS c
    WHERE q.corpus = {{ corpus | literal }} AND d.corpus = {{ corpus | literal }}
        AND s.corpus = {{ corpus | literal }} AND c.corpus = {{ corpus | literal }}
),

every_pair AS (
    SELECT q.row_index AS query_row, d.row_index AS doc_row
    FROM raw.queries AS q
    CROSS JOIN raw.documents AS d
    WHERE q.corpus = {{ corpus | literal }} AND d.corpus = {{ corpus | literal }}
),

shared AS (
    SELECT query_row, doc_row, sum(share) AS total
    FROM shares
    GROUP BY query_row, doc_row
)

SELECT {{ corpus | literal }} AS corpus, p.query_row, p.doc_row, coalesce(s.total, 0) / 1e12 AS score
FROM every_pair AS p
LEFT JOIN shared AS s ON s.query_row = p.query_row AND s.doc_row = p.doc_row
