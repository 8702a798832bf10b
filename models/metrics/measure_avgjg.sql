-- name: measure_avgjg
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- parameters: study = "eval"
-- description: map_avgjg, P_avgjg@k and Rprec_mult_avgjg@m (trec_eval -R qrels_jg): AP, P@k and
--   Rprec_mult@m against each judgment group's qrels, averaged over the topic's groups: the sum of the
--   group values over the number of groups, a group whose judged documents the system did not rank
--   scoring 0 there, as in trec_eval. A topic's groups are the queries of the study's part
--   `judgment_groups` (judgment_group_judgments: query_key the topic, query_id the topic and the group),
--   whose values the measures' own models compute (measure_ap for map_avgjg, measure_precision for
--   P_avgjg, measure_rprec for Rprec_mult_avgjg); the topics are the study's own queries (for which those
--   models also compute the three, against the topics' pooled judgments, judgment_group_topics: rows that
--   nothing reads).
{% set part = "judgment_group_judgments@judgment_groups" | source_study(study) %}
WITH groups AS (
    SELECT DISTINCT query_key AS topic, query_id AS group_query
    FROM models.judgments
    WHERE study = {{ part | literal }}
),

group_counts AS (
    SELECT topic, count(*) AS groups
    FROM groups
    GROUP BY topic
),

group_values AS (
    SELECT system, query, measure, value FROM models.measure_ap WHERE study = {{ part | literal }}
    UNION ALL
    SELECT system, query, measure, value FROM models.measure_precision WHERE study = {{ part | literal }}
    UNION ALL
    SELECT system, query, measure, value FROM models.measure_rprec WHERE study = {{ part | literal }}
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    coalesce({{ exact_sum("v.value") }}, 0) / c.groups AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('map_avgjg', 'P_avgjg', 'Rprec_mult_avgjg')
JOIN group_counts AS c ON c.topic = e.query
JOIN groups AS g ON g.topic = e.query
LEFT JOIN group_values AS v ON v.system = e.system AND v.query = g.group_query AND v.measure = m.measure
WHERE e.study = {{ study | literal }}
GROUP BY e.study, e.system, e.query, m.measure, c.groups
