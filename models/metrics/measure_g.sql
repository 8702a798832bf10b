-- name: measure_g
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain
-- description: G (trec_eval G, an experimental measure of 2008 that combines qualities of AP and nDCG):
--   each ranked document with a gain g (grade_gains: the grade, or the gains given, G(gains={1:3.0}),
--   trec_eval G.1=3) at rank k adds g / log2(2 + C(k) - S(k)), S(k) the gain of the first k documents
--   (its own included) and C(k) what an ideal ranking would have cost by then: the sum over ranks 1 to
--   k of max(1, the ideal ranking's gain there), 1 past its end (ideal_ranking). G is the sum over the
--   ranking divided by the ideal ranking's total gain (0 where that is 0). C(k) is k plus the ideal
--   gains' excess over 1 up to rank min(k, L), L the ideal ranking's length (ideal_prefixes).
WITH requested AS (
    SELECT measure
    FROM models.measure_requests
    WHERE family = 'G'
),

ideal_totals AS (
    SELECT i.query, i.measure, max(i.positions) AS positions, {{ exact_sum('i.gain') }} AS total
    FROM models.ideal_prefixes AS i
    JOIN requested AS m ON m.measure = i.measure
    GROUP BY i.query, i.measure
),

ranked AS (
    {%- set prefix = "PARTITION BY g.system, g.query, g.measure ORDER BY g.rank ROWS UNBOUNDED PRECEDING" %}
    SELECT
        g.system,
        g.query,
        g.measure,
        g.rank,
        g.gain,
        {{ running_exact_sum('g.gain', prefix) }} AS gained
    FROM models.ranked_gains AS g
    JOIN requested AS m ON m.measure = g.measure
),

contributions AS (
    SELECT
        r.system,
        r.query,
        r.measure,
        {{ exact_sum('r.gain / log2(2 + r.rank + coalesce(i.excess, 0) - r.gained)') }} AS g
    FROM ranked AS r
    LEFT JOIN ideal_totals AS t ON t.query = r.query AND t.measure = r.measure
    LEFT JOIN models.ideal_prefixes AS i
        ON i.query = r.query AND i.measure = r.measure AND i.rank = least(r.rank, t.positions)
    GROUP BY r.system, r.query, r.measure
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN t.total > 0 THEN coalesce(c.g, 0) / t.total ELSE 0 END AS value
FROM models.evaluated_queries AS e
CROSS JOIN requested AS m
LEFT JOIN ideal_totals AS t ON t.query = e.query AND t.measure = m.measure
LEFT JOIN contributions AS c ON c.system = e.system AND c.query = e.query AND c.measure = m.measure
