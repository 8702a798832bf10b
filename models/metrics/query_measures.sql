-- name: query_measures
-- version: 4
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, aggregate); unique_grain; at_least_one_row
-- parameters: study_measures = [], measures = ["AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec", "Bpref", "Success@10", "NumRet", "NumRel", "NumRelRet", "NumQ"]
-- description: Every requested measure of every system on every evaluated query, in one long form
--   (trec_eval -q): (study, system, query, measure, value, aggregate). The ranked-list measures of
--   models/metrics/ (read only from the models of the requested measures, rankhouse.measures'
--   registry: a measure nobody asked for is not computed), and a study's own per-query measures from
--   the models the parameter `study_measures` names (each in this shape, e.g. evidence_set_measures:
--   agreed coverage, redundancy). aggregate says how run_measures combines a measure over queries (mean, sum or
--   geometric). value is NULL where a measure is undefined for the query (e.g. a pair cosine of
--   fewer than two documents). A string per query (relstring) is not here: measure_relstring.
WITH ranked_list_measures AS (
    {%- for model in measures | measure_models %}
    {{ "UNION ALL " if not loop.first }}SELECT * FROM models.{{ model | identifier }}
    {%- else %}
    {{ no_rows({"study": "VARCHAR", "system": "VARCHAR", "query": "VARCHAR", "measure": "VARCHAR",
                "value": "DOUBLE"}) | indent(4) }}
    {%- endfor %}
)

SELECT r.study, r.system, r.query, r.measure, r.value, m.aggregate
FROM ranked_list_measures AS r
JOIN models.measure_requests AS m ON m.measure = r.measure
{%- for source in study_measures %}

UNION ALL

SELECT study, system, query, measure, value, aggregate
FROM models.{{ source | identifier }}
{%- endfor %}
