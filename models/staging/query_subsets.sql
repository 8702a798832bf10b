-- name: query_subsets
-- version: 2
-- stage: evaluate
-- grain: study, subset, query
-- audits: not_null(study, subset, query, query_order); unique_grain
-- parameters: study = "eval", query_subsets = []
-- description: The sets of judged queries that means, intervals and the paired bootstrap are reported
--   over, by query id and the query's position in the study's order: `all` (every query in the judgments) and the study's own subsets, from the models the
--   parameter `query_subsets` names (each with columns subset and query_key, e.g. retrieval_subsets:
--   the queries whose text is not a training document; evidence_subsets: each split's tasks). A
--   source written `model@part` gives the subsets of a part of the study (rankings' parts); every part
--   has its own `all`.
WITH judged AS (
    SELECT DISTINCT study, query_key, query_id, query_order
    FROM models.judgments
)

SELECT study, 'all' AS subset, query_id AS query, query_order
FROM judged
{%- for source in query_subsets %}

UNION ALL

SELECT j.study, s.subset, j.query_id AS query, j.query_order
FROM models.{{ source | source_model }} AS s
JOIN judged AS j ON j.study = {{ source | source_study(study) | literal }} AND j.query_key = s.query_key
{%- endfor %}
