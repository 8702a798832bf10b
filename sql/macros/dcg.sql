{#- The discounted gain of a document at a rank: gain / log2(rank + 1) (Jarvelin and Kekalainen; trec_eval's
    ndcg). The one place a DCG discount is written: measure_ndcg and measure_dcg (dcg_sums) and the
    evidence oracle's subset DCG call it. -#}
{% macro dcg_term(gain, rank) -%}
({{ gain }}) / log2({{ rank }} + 1)
{%- endmacro %}


{#- The DCG of each system's ranking and of the ideal ranking (ranked_gains, ideal_ranking), per query and
    measure of the CTE `requested` (a column measure), as the CTEs scales (query, measure, scale),
    dcg (system, query, measure, dcg) and ideal_dcg (query, measure, ideal), both sums of dcg_term
    in units of the query's scale: its gains divided by 2^s, s = floor(log2(its highest gain)) - 30 where
    that is above 0 (1 for a query without a positive gain), so that the exact sums stay below 1e14 (a power
    of two rounds nothing). measure_ndcg divides one by the other, measure_dcg gives each back in gains. -#}
{% macro dcg_sums(requested) -%}
-- each query's scale: its highest gain is its ideal ranking's first
scales AS (
    SELECT i.query, i.measure, pow(2, greatest(0, floor(log2(max(i.gain))) - 30)) AS scale
    FROM models.ideal_ranking AS i
    JOIN {{ requested | identifier }} AS m ON m.measure = i.measure
    WHERE i.rank = 1
    GROUP BY i.query, i.measure
),

-- a query without a positive gain has no scale (nothing to divide); its ranking may still gain below 0
dcg AS (
    SELECT
        g.system,
        g.query,
        g.measure,
        {{ exact_sum(dcg_term('g.gain / coalesce(s.scale, 1)', 'g.rank')) }} AS dcg
    FROM models.ranked_gains AS g
    JOIN {{ requested | identifier }} AS m ON m.measure = g.measure
    LEFT JOIN scales AS s ON s.query = g.query AND s.measure = g.measure
    GROUP BY g.system, g.query, g.measure
),

ideal_dcg AS (
    SELECT i.query, i.measure, {{ exact_sum(dcg_term('i.gain / s.scale', 'i.rank')) }} AS ideal
    FROM models.ideal_ranking AS i
    JOIN scales AS s ON s.query = i.query AND s.measure = i.measure
    GROUP BY i.query, i.measure
)
{%- endmacro %}
