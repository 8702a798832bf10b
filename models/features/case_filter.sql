-- name: case_filter
-- version: 1
-- stage: prepare
-- grain: case_id
-- audits: not_null(case_id, documents, survivors, survival, violations); unique_grain; accepted_range(violations, 0, 0)
-- parameters: filter_units = 200
-- description: What E4's hard filter did, per case (seed 004): documents (every training document),
--   survivors (those the 'hard-filter' ranking keeps), survival = survivors / documents, and
--   violations: kept documents whose stored unwanted feature (read again from feature_values, not
--   from the ranking's own inputs) is above 0.2 (filter_units); the audit requires 0, the seed's
--   mechanical check that filtered results satisfy the numerical constraint.
WITH kept AS (
    SELECT r.case_id, r.doc_key, v.units
    FROM models.case_rankings AS r
    JOIN models.control_cases AS c ON c.case_id = r.case_id AND c.corpus = r.corpus
    JOIN models.feature_values AS v
        ON v.corpus = c.corpus AND v.feature = c.unwanted_feature AND v.split = 'train' AND v.row_index = r.doc_key
    WHERE r.system = 'hard-filter'
),

documents AS (
    SELECT case_id, count(*) AS documents
    FROM models.case_scores
    WHERE system = 'positive'
    GROUP BY case_id
)

SELECT
    d.case_id,
    d.documents,
    count(k.doc_key) AS survivors,
    count(k.doc_key) / d.documents AS survival,
    count(k.doc_key) FILTER (WHERE k.units > {{ filter_units }}) AS violations
FROM documents AS d
LEFT JOIN kept AS k ON k.case_id = d.case_id
GROUP BY d.case_id, d.documents
