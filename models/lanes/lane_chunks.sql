-- name: lane_chunks
-- version: 3
-- stage: prepare
-- grain: corpus, doc_id, chunk
-- audits: not_null(corpus, doc_row, doc_id, chunk, start, length, text, chunks); unique_grain; accepted_range(length, 0, )
-- parameters: corpus = "banking77", chunk_size = 3500, chunk_overlap = 350, chunker = "window"
-- description: The chunks of every candidate document (seed 002: 3,500 characters with a 350-character
--   overlap), by the chunker the protocol names: "semantic", the seed's, cut at sentence and paragraph
--   boundaries (lane_semantic_chunks; rankhouse/studies/lanes/chunking.py), or "window", the named alternative: chunk i
--   (0-based) starts at character i * (chunk_size - chunk_overlap), i.e. 0, 3150, 6300, ..., and has up
--   to chunk_size characters; a document of n characters has 1 chunk if n <= chunk_size, else 1 +
--   ceil((n - chunk_size) / (chunk_size - chunk_overlap)), the last one ending at its end. Characters are
--   Unicode code points (DuckDB's and Spark's length and substr). start is 0-based; chunks counts the
--   document's.
{{- require(chunker in ["semantic", "window"], "chunker is semantic (the seed's) or window") }}
{% if chunker == "semantic" -%}
SELECT corpus, doc_row, doc_id, chunk, start, length, text, chunks
FROM models.lane_semantic_chunks
{%- else -%}
WITH documents AS (
    SELECT DISTINCT c.corpus, c.doc_row, c.doc_id, d.text, length(d.text) AS characters
    FROM models.lane_candidates AS c
    JOIN models.documents AS d ON d.corpus = c.corpus AND d.doc_row = c.doc_row
    WHERE c.corpus = {{ corpus | literal }}
),

counted AS (
    SELECT
        corpus,
        doc_row,
        doc_id,
        text,
        characters,
        CASE
            WHEN characters <= {{ chunk_size }} THEN 1
            ELSE 1 + CAST(ceil((characters - {{ chunk_size }}) / ({{ chunk_size }} - {{ chunk_overlap }})) AS BIGINT)
        END AS chunks
    FROM documents
),

numbered AS (
    SELECT corpus, doc_row, doc_id, text, characters, chunks, unnest(generate_series(0, chunks - 1)) AS chunk
    FROM counted
)

SELECT
    corpus,
    doc_row,
    doc_id,
    chunk,
    chunk * ({{ chunk_size }} - {{ chunk_overlap }}) AS start,
    least({{ chunk_size }}, characters - chunk * ({{ chunk_size }} - {{ chunk_overlap }})) AS length,
    substr(text, chunk * ({{ chunk_size }} - {{ chunk_overlap }}) + 1, {{ chunk_size }}) AS text,
    chunks
FROM numbered
{%- endif %}
