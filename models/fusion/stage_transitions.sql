-- name: stage_transitions
-- version: 1
-- stage: evaluate
-- grain: transition
-- audits: not_null(transition, from_stage, to_stage, queries, mean_delta, improved, worsened, unchanged); unique_grain; accepted_range(mean_delta, -1, 1); at_least_one_row
-- parameters: stage_transitions = [["dense", "dense_admitted"]]
-- columns: transition = "from -> to", from_stage = "The stage before (a system of the study's rankings)",
--   to_stage = "The stage after", mean_delta = "The mean over the judged queries of eq. 20's Delta_q:
--   nDCG@10 after minus before", improved = "Queries whose nDCG@10 rises", worsened = "Queries whose nDCG@10
--   falls", unchanged = "Queries whose nDCG@10 is the same"
-- description: Eq. 20 (seed 003) at every transition between the pipeline's stages that the protocol
--   declares (stage_transitions: [from, to] pairs of systems, e.g. dense -> dense_admitted, dense -> rrf,
--   rrf -> rrf_admitted): per query Delta_q = sum_d G_d [w(r_to(d)) - w(r_from(d))] / IDCG_q with w(r) =
--   1{r <= 10} / log2(r + 1), which is the difference of the two stages' nDCG@10 (trec_eval's, measure_ndcg,
--   over query_measures; stage_ndcg_deltas holds each query's). Per transition: the queries, the mean
--   Delta (exact), and how many queries improve, worsen or stay; the paired bootstrap interval of a
--   transition that the protocol also lists as a contrast [to, from] is paired_bootstrap's.
SELECT
    transition,
    min(from_stage) AS from_stage,
    min(to_stage) AS to_stage,
    count(*) AS queries,
    {{ mean('delta') }} AS mean_delta,
    count(*) FILTER (WHERE delta > 0) AS improved,
    count(*) FILTER (WHERE delta < 0) AS worsened,
    count(*) FILTER (WHERE delta = 0) AS unchanged
FROM models.stage_ndcg_deltas
GROUP BY transition
