-- name: evaluated_queries
-- version: 1
-- stage: evaluate
-- grain: run_id, qid
-- audits: not_null(run_id, qid, num_rel, num_judged_nonrel); unique_grain
-- parameters: relevance_level = 1, complete = true
-- description: The queries each run is scored on, with their judgment counts. Complete (trec_eval
--   -c, the default): every query in the qrels, a query the run did not answer scoring 0.
--   Otherwise only the qrels queries the run retrieved documents for. num_rel counts grades >=
--   relevance_level; num_judged_nonrel counts grades from 0 to below it (negative = not judged).
WITH topics AS (
    SELECT
        qid,
        count_if(rel >= {{ relevance_level }}) AS num_rel,
        count_if(rel >= 0 AND rel < {{ relevance_level }}) AS num_judged_nonrel
    FROM gate.qrels
    GROUP BY qid
),

runs AS (
    SELECT DISTINCT run_id FROM raw.runs
),

answered AS (
    SELECT DISTINCT run_id, qid FROM models.run_ranking
)

SELECT runs.run_id, topics.qid, topics.num_rel, topics.num_judged_nonrel
FROM runs
CROSS JOIN topics
{% if not complete -%}
WHERE EXISTS (
    SELECT 1 FROM answered WHERE answered.run_id = runs.run_id AND answered.qid = topics.qid
)
{%- endif %}
