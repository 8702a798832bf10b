-- name: lane_semantic_chunks
-- version: 1
-- stage: prepare
-- grain: corpus, doc_id, chunk
-- audits: not_null(corpus, doc_row, doc_id, chunk, start, length, text, chunks); unique_grain; accepted_range(length, 0, )
-- dialect: duckdb: calls a Python function
-- functions: semantic_chunks
-- parameters: corpus = "banking77", chunk_size = 3500, chunk_overlap = 350
-- description: Seed 002's semantic chunker over every candidate document: chunks of at most chunk_size
--   characters cut at sentence and paragraph boundaries, overlapping by whole sentences of at most
--   chunk_overlap characters (the rule: rankhouse/studies/lanes/chunking.py, the SQL function semantic_chunks, a pure
--   function of the text). Chunks numbered from 0, start 0-based in Unicode code points, text the
--   document's substring; chunks counts the document's. lane_chunks reads it when chunker = "semantic".
WITH documents AS (
    SELECT DISTINCT c.corpus, c.doc_row, c.doc_id, d.text
    FROM models.lane_candidates AS c
    JOIN models.documents AS d ON d.corpus = c.corpus AND d.doc_row = c.doc_row
    WHERE c.corpus = {{ corpus | literal }}
),

cut AS (
    SELECT corpus, doc_row, doc_id, text, semantic_chunks(text, {{ chunk_size }}, {{ chunk_overlap }}) AS spans
    FROM documents
),

numbered AS (
    SELECT
        corpus,
        doc_row,
        doc_id,
        text,
        len(spans) AS chunks,
        unnest(spans) AS span,
        unnest(generate_series(0, len(spans) - 1)) AS chunk
    FROM cut
)

SELECT
    corpus,
    doc_row,
    doc_id,
    chunk,
    span.start AS start,
    span.length AS length,
    substr(text, span.start + 1, span.length) AS text,
    chunks
FROM numbered
