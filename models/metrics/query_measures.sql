-- name: query_measures
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, aggregate); unique_grain; at_least_one_row
-- parameters: study_measures = []
-- description: Every requested measure of every system on every evaluated query, in one long form
--   (trec_eval -q): (study, system, query, measure, value, aggregate). The ranked-list measures of
--   models/metrics/, and a study's own per-query measures from the models the parameter
--   `study_measures` names (each in this shape, e.g. evidence_set_measures: agreed coverage,
--   redundancy). aggregate says how run_measures combines a measure over queries (mean, sum or
--   geometric). value is NULL where a measure is undefined for the query (e.g. a pair cosine of
--   fewer than two documents).
WITH ranked_list_measures AS (
    SELECT * FROM models.measure_counts
    UNION ALL SELECT * FROM models.measure_precision
    UNION ALL SELECT * FROM models.measure_recall
    UNION ALL SELECT * FROM models.measure_success
    UNION ALL SELECT * FROM models.measure_rr
    UNION ALL SELECT * FROM models.measure_rprec
    UNION ALL SELECT * FROM models.measure_ap
    UNION ALL SELECT * FROM models.measure_bpref
    UNION ALL SELECT * FROM models.measure_ndcg
    UNION ALL SELECT * FROM models.measure_iprec
    UNION ALL SELECT * FROM models.measure_err
    UNION ALL SELECT * FROM models.measure_judged
    UNION ALL SELECT * FROM models.measure_queries
)

SELECT r.study, r.system, r.query, r.measure, r.value, m.aggregate
FROM ranked_list_measures AS r
JOIN models.measure_requests AS m ON m.measure = r.measure
{%- for source in study_measures %}

UNION ALL

SELECT study, system, query, measure, value, aggregate
FROM models.{{ source | identifier }}
{%- endfor %}
