-- name: ideal_prefixes
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: study, query, measure, rank
-- audits: not_null(study, query, measure, rank, gain, dcg, excess, positions); unique_grain
-- description: The ideal ranking's running sums, per query and measure of trec_eval's experimental gain
--   measures (G, ndcg_rel, Rndcg): at each rank of ideal_ranking, its gain, dcg the DCG of the ranks up to
--   it (dcg_term, an exact running sum), excess the sum of the gains' excess over 1 up to it (what G's
--   ideal cost adds to the rank), and positions, the ideal ranking's length L.
SELECT
    i.study,
    i.query,
    i.measure,
    i.rank,
    i.gain,
    {%- set prefix = "PARTITION BY i.study, i.query, i.measure ORDER BY i.rank ROWS UNBOUNDED PRECEDING" %}
    {{ running_exact_sum(dcg_term('i.gain', 'i.rank'), prefix) }} AS dcg,
    {{ running_exact_sum('greatest(i.gain, 1) - 1', prefix) }} AS excess,
    count(*) OVER (PARTITION BY i.study, i.query, i.measure) AS positions
FROM models.ideal_ranking AS i
JOIN models.measure_requests AS m ON m.measure = i.measure
WHERE m.family IN ('G', 'ndcg_rel', 'Rndcg')
