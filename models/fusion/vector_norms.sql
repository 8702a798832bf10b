-- name: vector_norms
-- version: 1
-- stage: prepare
-- grain: corpus, kind
-- audits: not_null(corpus, kind, rows, vectors, unpaired, dimension_min, dimension_max, norm_min, norm_max, max_norm_error); unique_grain; accepted_range(unpaired, 0, 0); accepted_range(max_norm_error, 0, 0.00001); at_least_one_row
-- dialect: duckdb: FLOAT[384] vectors and a list lambda
-- parameters: corpus = "banking77"
-- columns: kind = "documents or queries", vectors = "Stored vectors of the corpus's rows of that kind",
--   unpaired = "Rows without exactly one vector, and vectors without a row (pair alignment)",
--   dimension_min = "The smallest vector dimension", dimension_max = "The largest vector dimension",
--   norm_min = "The smallest Euclidean norm, summed in doubles", norm_max = "The largest Euclidean norm",
--   max_norm_error = "The largest |norm - 1|"
-- description: Section 9's second gate (seed 003): the dense arm's score is an inner product, which is a
--   cosine only while every stored vector is unit-norm, and the vectors must pair with the rows they
--   belong to. Per corpus and kind (documents, queries): rows, stored vectors, rows without exactly one
--   vector plus vectors without a row (0, audited), dimensions, and the Euclidean norms (each a sum of
--   squares in doubles) with their largest distance from 1, audited to at most 1e-5 (fp32 unit vectors of
--   384 dimensions are within about 1e-7). A prepare model: a failing audit stops prepare, so no freeze,
--   and no cosine distribution is read as one.
WITH documents AS (
    SELECT d.doc_id AS id, v.doc_id AS vector_id, v.vector::FLOAT[] AS vector
    FROM (SELECT doc_id FROM models.documents WHERE corpus = {{ corpus | literal }}) AS d
    FULL JOIN (SELECT doc_id, vector FROM models.document_vectors WHERE corpus = {{ corpus | literal }}) AS v
        ON v.doc_id = d.doc_id
),

queries AS (
    SELECT q.qid AS id, v.qid AS vector_id, v.vector::FLOAT[] AS vector
    FROM (SELECT qid FROM models.queries WHERE corpus = {{ corpus | literal }}) AS q
    FULL JOIN (SELECT qid, vector FROM models.query_vectors WHERE corpus = {{ corpus | literal }}) AS v
        ON v.qid = q.qid
),

paired AS (
    SELECT 'documents' AS kind, id, vector_id, vector FROM documents
    UNION ALL
    SELECT 'queries' AS kind, id, vector_id, vector FROM queries
),

per_row AS (
    SELECT
        kind,
        id,
        vector_id,
        count(vector_id) OVER (PARTITION BY kind, coalesce(id, vector_id)) AS vectors_of_row,
        len(vector) AS dimension,
        sqrt(list_sum(list_transform(vector, lambda x: CAST(x AS DOUBLE) * x))) AS norm
    FROM paired
)

SELECT
    {{ corpus | literal }} AS corpus,
    kind,
    count(DISTINCT id) AS rows,
    count(vector_id) AS vectors,
    count(*) FILTER (WHERE id IS NULL OR vectors_of_row <> 1) AS unpaired,
    min(dimension) AS dimension_min,
    max(dimension) AS dimension_max,
    min(norm) AS norm_min,
    max(norm) AS norm_max,
    max(abs(norm - 1)) AS max_norm_error
FROM per_row
GROUP BY kind
