-- name: ideal_ranking
-- version: 2
-- stage: evaluate
-- holds: labels
-- grain: study, query, rank
-- audits: not_null(study, query, rank, grade); unique_grain; accepted_range(grade, 0, )
-- description: Per query, the judged documents with a positive grade in decreasing grade: the ideal
--   ranking that nDCG divides by (trec_eval builds it from every judged document, retrieved or not).
SELECT
    study,
    query_id AS query,
    row_number() OVER (PARTITION BY study, query_id ORDER BY grade DESC, doc_key) AS rank,
    grade
FROM models.judgments
WHERE grade > 0
