-- name: measure_ndcg_rel
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain
-- description: ndcg_rel (trec_eval ndcg_rel, experimental): nDCG averaged over the relevant documents,
--   relevant meaning a positive gain (grade_gains; the gains given, ndcg_rel(gains={1:3.0}), trec_eval
--   ndcg_rel.1=3): at each such document retrieved, at rank k, DCG(k) / IDCG(min(k, L)), DCG the
--   ranking's (ranked_gains, dcg_term) and IDCG the ideal ranking's (ideal_prefixes, L documents long);
--   each of the L relevant documents not retrieved counts DCG(end) / IDCG(L). The mean over the L, 0
--   where their sum is not positive.
WITH requested AS (
    SELECT measure
    FROM models.measure_requests
    WHERE family = 'ndcg_rel'
),

ranked AS (
    {%- set prefix = "PARTITION BY g.system, g.query, g.measure ORDER BY g.rank ROWS UNBOUNDED PRECEDING" %}
    SELECT
        g.system,
        g.query,
        g.measure,
        g.rank,
        g.gain,
        {{ running_exact_sum(dcg_term('g.gain', 'g.rank'), prefix) }} AS dcg,
        {{ running_exact_sum(dcg_term('g.gain', 'g.rank'), 'PARTITION BY g.system, g.query, g.measure') }}
            AS final_dcg
    FROM models.ranked_gains AS g
    JOIN requested AS m ON m.measure = g.measure
),

averaged AS (
    SELECT
        r.system,
        r.query,
        r.measure,
        {{ exact_sum('CASE WHEN r.gain > 0 THEN r.dcg / i.dcg END') }} AS retrieved,
        count(*) FILTER (WHERE r.gain > 0) AS relevant_retrieved,
        max(r.final_dcg) AS final_dcg
    FROM ranked AS r
    JOIN models.ideal_prefixes AS i
        ON i.query = r.query AND i.measure = r.measure AND i.rank = least(r.rank, i.positions)
    GROUP BY r.system, r.query, r.measure
),

ideal_totals AS (
    SELECT query, measure, max(positions) AS positions, max(dcg) AS ideal_dcg
    FROM models.ideal_prefixes
    GROUP BY query, measure
),

sums AS (
    SELECT
        e.study,
        e.system,
        e.query,
        m.measure,
        t.positions,
        coalesce(a.retrieved, 0)
            + (t.positions - coalesce(a.relevant_retrieved, 0)) * coalesce(a.final_dcg, 0) / t.ideal_dcg
            AS total
    FROM models.evaluated_queries AS e
    CROSS JOIN requested AS m
    LEFT JOIN ideal_totals AS t ON t.query = e.query AND t.measure = m.measure
    LEFT JOIN averaged AS a ON a.system = e.system AND a.query = e.query AND a.measure = m.measure
)

SELECT study, system, query, measure, CASE WHEN total > 0 THEN total / positions ELSE 0 END AS value
FROM sums
