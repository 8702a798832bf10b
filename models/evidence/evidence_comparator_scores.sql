-- name: evidence_comparator_scores
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, doc_id
-- audits: not_null(bundle, task_id, doc_id, dense, bm25, bm25_pool_max, typed); unique_grain
-- parameters: typed_bm25_weight = 0.1
-- description: The two comparators' scores of every pool member (seed 000, "baseline";
--   docs/evidence_bundle.md): dense(t, d) = the cosine of the question and the document (facet 0);
--   typed(t, d) = 1.0 x dense(t, d) + typed_bm25_weight x bm25(t, d) / max over t's pool of
--   bm25(t, .), the BM25 term 0 when that maximum is 0. A fixed mix, never tuned on outcomes.
WITH scores AS (
    SELECT
        c.bundle,
        c.task_id,
        c.doc_id,
        c.cosine AS dense,
        b.score AS bm25,
        max(b.score) OVER (PARTITION BY c.bundle, c.task_id) AS bm25_pool_max
    FROM models.evidence_facet_cosines AS c
    JOIN models.evidence_bm25_scores AS b ON b.bundle = c.bundle AND b.task_id = c.task_id AND b.doc_id = c.doc_id
    WHERE c.facet = 0
)

SELECT
    bundle,
    task_id,
    doc_id,
    dense,
    bm25,
    bm25_pool_max,
    1.0 * dense + {{ typed_bm25_weight }} * CASE WHEN bm25_pool_max = 0 THEN 0.0 ELSE bm25 / bm25_pool_max END AS typed
FROM scores
