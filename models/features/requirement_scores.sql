-- name: requirement_scores
-- version: 1
-- stage: prepare
-- grain: system, query_key, doc_row
-- audits: not_null(system, corpus, query_key, doc_row, score); unique_grain
-- parameters: corpus = "banking77"
-- depends_on: models.requirement_features
-- description: Each explicit requirement (feature_requirements) scored on every training document's
--   stored features with the shared weighted relevance, r_i in place of q_i (seed 004):
--   sum(r_i w_i d_i) / sum(r_i w_i), w_i the global feature weights, d_i the document's value (units /
--   1000); 0 for a requirement without weights (an interpretation that named no feature) and for a zero
--   denominator. Built after requirement_features, whose audit refuses a feature the schema lacks.
WITH requirement_values AS (
    SELECT r.system, r.query_key, v.row_index AS doc_row, w.weight, r.requirement, v.units / 1000 AS value
    FROM models.feature_requirements AS r
    JOIN models.feature_weights AS w ON w.feature = r.feature
    JOIN models.feature_values AS v ON v.corpus = r.corpus AND v.feature = r.feature AND v.split = 'train'
),

scores AS (
    SELECT system, query_key, doc_row, {{ weighted_relevance('weight', 'requirement', 'value') | indent(4) }} AS score
    FROM requirement_values
    GROUP BY system, query_key, doc_row
),

-- Every requirement the study scores, each once: E3's two systems for every phrase, E4's positive
-- query for every case, whether or not it names a feature.
requirements AS (
    SELECT s.system, q.query_key
    FROM models.group_queries AS q
    CROSS JOIN (VALUES ('interpreted-requirements'), ('manual-requirements')) AS s (system)
    UNION ALL
    SELECT 'positive' AS system, case_row AS query_key
    FROM models.control_cases
    WHERE corpus = {{ corpus }}
)

SELECT
    r.system,
    d.corpus,
    r.query_key,
    d.doc_row,
    coalesce(s.score, 0) AS score
FROM requirements AS r
CROSS JOIN models.documents AS d
LEFT JOIN scores AS s ON s.system = r.system AND s.query_key = r.query_key AND s.doc_row = d.doc_row
WHERE d.corpus = {{ corpus }}
