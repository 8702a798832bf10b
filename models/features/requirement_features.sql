-- name: requirement_features
-- version: 1
-- stage: prepare
-- grain: source, id, feature
-- audits: not_null(source, id, feature, position); unique_grain
-- parameters: corpus = "banking77"
-- description: Every feature a requirement names, with its position in the study's schema: E3's manual
--   weights (group weights), interpreted weights (interpreted) and E4's positive queries (case
--   positive) and unwanted features (case unwanted). A feature the schema does not have has no
--   position, which the not_null audit refuses, naming it (the requirements file and the schema are
--   separate inputs, so this check is a model's, not the loader's).
WITH named AS (
    SELECT 'group weights' AS source, group_id AS id, feature FROM models.group_weights WHERE corpus = {{ corpus }}
    UNION ALL
    SELECT 'interpreted' AS source, item AS id, feature FROM models.requirement_values WHERE corpus = {{ corpus }}
    UNION ALL
    SELECT 'case positive' AS source, case_id AS id, feature FROM models.case_weights WHERE corpus = {{ corpus }}
    UNION ALL
    SELECT 'case unwanted' AS source, case_id AS id, unwanted_feature AS feature FROM models.control_cases WHERE corpus = {{ corpus }}
)

SELECT n.source, n.id, n.feature, s.position
FROM named AS n
LEFT JOIN models.feature_schema AS s ON s.feature = n.feature
