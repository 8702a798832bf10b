-- name: requirement_scores
-- version: 2
-- stage: prepare
-- grain: system, query_key, doc_row
-- audits: not_null(system, corpus, query_key, doc_row, score_key, score); unique_grain
-- parameters: corpus = "banking77"
-- depends_on: models.requirement_features
-- dialect: duckdb: ordered list aggregates, list lambdas and list_dot_product over feature lists
-- description: Each explicit requirement (feature_requirements) scored on every training document's
--   stored features with the shared weighted relevance, r_i in place of q_i (seed 004):
--   sum(r_i w_i d_i) / sum(r_i w_i), w_i the global feature weights, d_i the document's value; 0 for a
--   requirement without weights (an interpretation that named no feature) and for a zero denominator.
--   Requirement weights are taken as whole thousandths, like feature values, so score_key (the exact
--   numerator, sql/macros/features.sql) ties exactly where the scores are equal. Built after
--   requirement_features, whose audit refuses a feature the schema lacks.
WITH weights AS (
    SELECT list(weight ORDER BY position) AS weights FROM models.feature_weights
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
),

-- A requirement's weights r_i in whole thousandths, in schema position order (0 where not named).
requirement_units AS (
    SELECT
        r.system,
        r.query_key,
        list(CAST(round(coalesce(f.requirement, 0) * 1000) AS INTEGER) ORDER BY w.position) AS units
    FROM requirements AS r
    CROSS JOIN models.feature_weights AS w
    LEFT JOIN models.feature_requirements AS f
        ON f.system = r.system AND f.query_key = r.query_key AND f.feature = w.feature
    GROUP BY r.system, r.query_key
),

requirement_terms AS (
    SELECT u.system, u.query_key, {{ weighted_terms('u.units', 'w.weights') }} AS terms
    FROM requirement_units AS u
    CROSS JOIN weights AS w
),

documents AS (
    {{ feature_lists('document_features', 'doc_row', corpus) | indent(4) }}
),

numerators AS (
    SELECT
        q.system,
        q.query_key,
        d.doc_row,
        list_sum(q.terms) AS denominator,
        {{ weighted_numerator('q.terms', 'd.units') }} AS score_key
    FROM requirement_terms AS q
    CROSS JOIN documents AS d
)

SELECT
    system,
    {{ corpus }} AS corpus,
    query_key,
    doc_row,
    score_key,
    {{ weighted_relevance('score_key', 'denominator') }} AS score
FROM numerators
