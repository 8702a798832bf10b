-- name: ideal_ranking
-- version: 3
-- stage: evaluate
-- holds: labels
-- grain: study, query, measure, rank
-- audits: not_null(study, query, measure, rank, grade, gain); unique_grain; accepted_range(rank, 1, )
-- description: Per query and measure that sums gains (grade_gains), the ideal ranking: the judged
--   documents with a positive gain in decreasing gain (equal gains by doc_key), ranked from 1, the
--   first k for a measure with a cutoff k. What nDCG divides by (trec_eval builds it from every judged
--   document, retrieved or not), and what G, ndcg_rel and Rndcg compare with.
WITH ranked AS (
    SELECT
        j.study,
        j.query_id AS query,
        m.measure,
        m.cutoff,
        row_number() OVER (PARTITION BY j.study, j.query_id, m.measure ORDER BY g.gain DESC, j.doc_key) AS rank,
        j.grade,
        g.gain
    FROM models.judgments AS j
    JOIN models.grade_gains AS g ON g.grade = j.grade
    JOIN models.measure_requests AS m ON m.measure = g.measure
    WHERE g.gain > 0
)

SELECT study, query, measure, rank, grade, gain
FROM ranked
WHERE cutoff IS NULL OR rank <= cutoff
