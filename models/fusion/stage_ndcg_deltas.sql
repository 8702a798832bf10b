-- name: stage_ndcg_deltas
-- version: 1
-- stage: evaluate
-- grain: transition, query
-- audits: not_null(transition, from_stage, to_stage, query, delta); unique_grain; accepted_range(delta, -1, 1); at_least_one_row
-- parameters: stage_transitions = [["dense", "dense_admitted"]]
-- columns: transition = "from -> to", from_stage = "The stage before (a system of the study's rankings)",
--   to_stage = "The stage after", delta = "Eq. 20's Delta_q: nDCG@10 of the stage after minus before"
-- description: Eq. 20 (seed 003) per judged query at every transition the protocol declares
--   (stage_transitions, [from, to] pairs of the study's systems): Delta_q = sum_d G_d [w(r_to(d)) -
--   w(r_from(d))] / IDCG_q, w(r) = 1{r <= 10} / log2(r + 1), the same number as the difference of the two
--   stages' nDCG@10 (measure_ndcg through query_measures: one definition of nDCG). stage_transitions
--   summarises them.
{{- require(stage_transitions, "stage_transitions names no [from, to] pair") }}
WITH transitions AS (
    {%- for from_stage, to_stage in stage_transitions %}
    SELECT {{ from_stage | literal }} AS from_stage, {{ to_stage | literal }} AS to_stage{{ " UNION ALL" if not loop.last }}
    {%- endfor %}
),

ndcg AS (
    SELECT system, query, value
    FROM models.query_measures
    WHERE measure = 'nDCG@10'
)

SELECT
    t.from_stage || ' -> ' || t.to_stage AS transition,
    t.from_stage,
    t.to_stage,
    a.query,
    b.value - a.value AS delta
FROM transitions AS t
JOIN ndcg AS a ON a.system = t.from_stage
JOIN ndcg AS b ON b.system = t.to_stage AND b.query = a.query
