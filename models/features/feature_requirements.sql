-- name: feature_requirements
-- version: 1
-- stage: prepare
-- grain: system, query_key, feature
-- audits: not_null(system, corpus, query_key, feature, requirement); unique_grain
-- parameters: corpus = "banking77"
-- description: Every explicit requirement scored on the stored document features, one row per named
--   feature with its requirement weight r_i (seed 004): E3's 'interpreted-requirements' (the
--   provider's reading of each phrase) and 'manual-requirements' (the group's manual weights, the
--   same for its four paraphrases), keyed as group_queries; E4's 'positive' query of each case,
--   keyed by case_row (as the E4 parts' query_key).
SELECT 'interpreted-requirements' AS system, q.corpus, q.query_key, r.feature, r.weight AS requirement
FROM models.requirement_values AS r
JOIN models.group_queries AS q ON q.corpus = r.corpus AND q.item = r.item

UNION ALL

SELECT 'manual-requirements' AS system, q.corpus, q.query_key, w.feature, w.weight AS requirement
FROM models.group_weights AS w
JOIN models.group_queries AS q ON q.corpus = w.corpus AND q.group_id = w.group_id

UNION ALL

SELECT 'positive' AS system, c.corpus, c.case_row AS query_key, w.feature, w.weight AS requirement
FROM models.case_weights AS w
JOIN models.control_cases AS c ON c.corpus = w.corpus AND c.case_id = w.case_id
WHERE c.corpus = {{ corpus }}
