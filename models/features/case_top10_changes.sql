-- name: case_top10_changes
-- version: 1
-- stage: prepare
-- grain: case_id, system
-- audits: not_null(case_id, system, top10_left, top10_unranked); unique_grain
-- description: E4's rank changes at the top against the positive-only ranking (seed 004), per case
--   and penalised or filtered system: top10_left counts the positive top-10 documents that are not in
--   the system's top 10, top10_unranked those of them the system does not rank at all (removed by the
--   hard filter), and mean_rank_change the mean of (system rank - positive rank) over the positive
--   top 10 that the system still ranks (positive: moved down).
WITH positive_top AS (
    SELECT case_id, doc_key, rank
    FROM models.case_rankings
    WHERE system = 'positive' AND rank <= 10
),

systems AS (
    SELECT DISTINCT case_id, system FROM models.case_rankings WHERE system <> 'positive'
)

SELECT
    s.case_id,
    s.system,
    count(*) FILTER (WHERE r.rank IS NULL OR r.rank > 10) AS top10_left,
    count(*) FILTER (WHERE r.rank IS NULL) AS top10_unranked,
    {{ mean('r.rank - p.rank') }} AS mean_rank_change
FROM systems AS s
JOIN positive_top AS p ON p.case_id = s.case_id
LEFT JOIN models.case_rankings AS r ON r.system = s.system AND r.case_id = p.case_id AND r.doc_key = p.doc_key
GROUP BY s.case_id, s.system
