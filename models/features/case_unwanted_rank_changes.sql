-- name: case_unwanted_rank_changes
-- version: 1
-- stage: evaluate
-- grain: case_id, system
-- audits: not_null(case_id, system, unwanted_documents, top10_before, top10_after, unranked); unique_grain
-- description: How E4's penalties and filter move the documents of a case's unwanted intents against
--   the positive-only ranking (seed 004's rank changes): per case and system, the unwanted-intent
--   documents, how many are in the top 10 before (positive) and after (the system), how many the
--   system does not rank (removed by the hard filter), and the mean of (system rank - positive rank)
--   over those it ranks (positive: demoted).
WITH unwanted AS (
    SELECT case_id, doc_row FROM models.case_intent_documents WHERE role = 'unwanted'
),

positive AS (
    SELECT case_id, doc_key, rank FROM models.case_rankings WHERE system = 'positive'
),

systems AS (
    SELECT DISTINCT case_id, system FROM models.case_rankings WHERE system <> 'positive'
)

SELECT
    s.case_id,
    s.system,
    count(*) AS unwanted_documents,
    count(*) FILTER (WHERE p.rank <= 10) AS top10_before,
    count(*) FILTER (WHERE r.rank <= 10) AS top10_after,
    count(*) FILTER (WHERE r.rank IS NULL) AS unranked,
    {{ mean('r.rank - p.rank') }} AS mean_rank_change
FROM systems AS s
JOIN unwanted AS u ON u.case_id = s.case_id
JOIN positive AS p ON p.case_id = u.case_id AND p.doc_key = u.doc_row
LEFT JOIN models.case_rankings AS r ON r.system = s.system AND r.case_id = u.case_id AND r.doc_key = u.doc_row
GROUP BY s.case_id, s.system
