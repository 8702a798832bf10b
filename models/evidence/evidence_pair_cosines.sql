-- name: evidence_pair_cosines
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, doc_a, doc_b
-- audits: not_null(bundle, task_id, doc_a, doc_b, cosine); unique_grain
-- parameters: bundle = "evidence_demo"
-- dialect: duckdb: FLOAT[384] vectors and array_inner_product
-- description: Cosine of every unordered pair of documents {d, e} of a task's pool (doc_a < doc_b):
--   the inner product d.e of their unit vectors, in double precision. The pair penalty of the
--   objective and the pair-cosine measure both come from it.
WITH members AS (
    SELECT p.bundle, p.task_id, p.doc_id, v.vector
    FROM models.evidence_pools AS p
    JOIN models.evidence_vectors AS v ON v.bundle = p.bundle AND v.doc_id = p.doc_id
    WHERE p.bundle = {{ bundle | literal }}
)

SELECT
    a.bundle,
    a.task_id,
    a.doc_id AS doc_a,
    b.doc_id AS doc_b,
    array_inner_product(CAST(a.vector AS DOUBLE[384]), CAST(b.vector AS DOUBLE[384])) AS cosine
FROM members AS a
JOIN members AS b ON b.task_id = a.task_id AND b.doc_id > a.doc_id
