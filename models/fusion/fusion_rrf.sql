-- name: fusion_rrf
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, score); unique_grain; accepted_range(score, 0, )
-- parameters: rrf_k = 60
-- description: Reciprocal rank fusion (seed 003, section 4): S = sum over the arms whose list holds
--   the document of 1 / (k + rank); an arm whose list does not hold it votes 0.
SELECT
    corpus,
    query_row,
    doc_row,
    sum(CASE WHEN listed THEN 1 / ({{ rrf_k }} + rank) ELSE 0 END) AS score
FROM models.fusion_candidates
GROUP BY corpus, query_row, doc_row
