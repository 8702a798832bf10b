-- name: evaluated_queries
-- version: 3
-- stage: evaluate
-- grain: study, system, query
-- audits: not_null(study, system, query, query_order, num_rel, num_judged_nonrel); unique_grain
-- parameters: study = "eval", relevance_level = 1, complete = true, rankings = ["run_ranking"]
-- description: The queries each system is scored on, with their judgment counts. Complete (trec_eval
--   -c, the default): every query in the judgments, a query the system did not answer scoring 0.
--   Otherwise only the judged queries the system ranked documents for. num_rel counts grades >=
--   relevance_level; num_judged_nonrel counts grades from 0 to below it (negative = not judged). The
--   systems are those that rank a judged document, and every loaded TREC run when the rankings
--   include run_ranking (trec_eval scores a run without any judged document 0; the runs are read from
--   run_blocks, and from the run lines only when the blocks do not cover them all, as run_ranking
--   decides); each part of a study (rankings' `model@part` sources) has its own systems and queries.
WITH topics AS (
    SELECT
        study,
        query_key,
        query_id,
        query_order,
        count_if(grade >= {{ relevance_level }}) AS num_rel,
        count_if(grade >= 0 AND grade < {{ relevance_level }}) AS num_judged_nonrel
    FROM models.judgments
    GROUP BY study, query_key, query_id, query_order
),

systems AS (
    SELECT DISTINCT study, system FROM models.judged_ranking
    {%- if "run_ranking" in rankings %}
    UNION
    SELECT DISTINCT {{ study | literal }}, run_id FROM models.run_blocks
    UNION
    SELECT DISTINCT {{ study | literal }}, run_id FROM models.runs
    WHERE (SELECT count(*) FROM models.runs) <> (SELECT coalesce(sum(lines), 0) FROM models.run_blocks)
    {%- endif %}
)
{%- if not complete %},

answered AS (
    SELECT DISTINCT study, system, query_key FROM models.rankings
)
{%- endif %}

SELECT t.study, s.system, t.query_id AS query, t.query_order, t.num_rel, t.num_judged_nonrel
FROM systems AS s
JOIN topics AS t ON t.study = s.study
{% if not complete -%}
WHERE EXISTS (
    SELECT 1 FROM answered AS a WHERE a.study = s.study AND a.system = s.system AND a.query_key = t.query_key
)
{%- endif %}
