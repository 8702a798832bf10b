-- name: evidence_facet_cosines
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, facet, doc_id
-- audits: not_null(bundle, task_id, facet, doc_id, cosine); unique_grain; at_least_one_row
-- parameters: bundle = "evidence_demo"
-- dialect: duckdb: FLOAT[384] vectors and array_inner_product
-- description: Cosine of every facet of a task with every member of its complete judged pool (seed
--   000, "representation" and "facets"): the inner product, in double precision, of the unit MiniLM
--   vectors of the facet (models.evidence_facet_vectors: facet 0 the question, facet k + 1 requirement k,
--   each encoded on its own) and of the document (models.evidence_vectors). Facet 0 is also the dense
--   score of the baseline.
SELECT
    p.bundle,
    p.task_id,
    f.facet,
    p.doc_id,
    array_inner_product(CAST(f.vector AS DOUBLE[384]), CAST(v.vector AS DOUBLE[384])) AS cosine
FROM models.evidence_pools AS p
JOIN models.evidence_facet_vectors AS f ON f.bundle = p.bundle AND f.task_id = p.task_id
JOIN models.evidence_vectors AS v ON v.bundle = p.bundle AND v.doc_id = p.doc_id
WHERE p.bundle = {{ bundle | literal }}
