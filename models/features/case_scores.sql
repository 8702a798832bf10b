-- name: case_scores
-- version: 1
-- stage: prepare
-- grain: system, query_key, doc_row
-- audits: not_null(system, corpus, case_id, query_key, doc_row, penalty, positive, unwanted_units, score); unique_grain
-- parameters: corpus = "banking77"
-- description: E4's scores of every training document for every case (seed 004): 'positive' is the
--   case's positive query alone (requirement_scores), 'penalty-<lambda>' the penalised score
--   positive(d) - lambda * d_unwanted, d_unwanted the document's value of the case's unwanted feature
--   (unwanted_units / 1000), for the seed's strengths lambda = 0.25, 0.5 and 1 ('positive' is lambda
--   = 0). Scores are whole 1e-12 units (as BM25's): the positive score rounded to them, less lambda *
--   unwanted_units * 1e9, an exact whole number for these strengths, so that penalised scores equal in
--   exact arithmetic (0.105 - 0.5 * 0.160 = 0.108 - 0.5 * 0.166) tie exactly and the row index
--   decides. query_key is the case's row (case_row).
WITH strengths AS (
    SELECT system, CAST(penalty AS DOUBLE) AS penalty
    FROM (VALUES ('positive', 0.0), ('penalty-0.25', 0.25), ('penalty-0.5', 0.5), ('penalty-1', 1.0)) AS s (system, penalty)
),

unwanted AS (
    SELECT c.case_id, c.case_row, v.row_index AS doc_row, v.units
    FROM models.control_cases AS c
    JOIN models.feature_values AS v ON v.corpus = c.corpus AND v.feature = c.unwanted_feature AND v.split = 'train'
    WHERE c.corpus = {{ corpus }}
)

SELECT
    s.system,
    p.corpus,
    u.case_id,
    p.query_key,
    p.doc_row,
    s.penalty,
    p.score AS positive,
    u.units AS unwanted_units,
    (CAST(round(p.score * 1e12) AS BIGINT) - CAST(s.penalty * u.units * 1e9 AS BIGINT)) / 1e12 AS score
FROM models.requirement_scores AS p
JOIN unwanted AS u ON u.case_row = p.query_key AND u.doc_row = p.doc_row
CROSS JOIN strengths AS s
WHERE p.system = 'positive'
