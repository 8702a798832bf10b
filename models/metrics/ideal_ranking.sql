-- name: ideal_ranking
-- version: 1
-- stage: evaluate
-- grain: qid, rank
-- audits: not_null(qid, rank, rel); unique_grain; accepted_range(rel, 1, )
-- description: Per query, the documents with a positive grade in decreasing grade: the ideal
--   ranking that nDCG divides by (trec_eval builds it from every judged document, retrieved or not).
SELECT
    qid,
    row_number() OVER (PARTITION BY qid ORDER BY rel DESC, docno) AS rank,
    rel
FROM gate.qrels
WHERE rel > 0
