-- name: measure_rndcg
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain
-- description: Rndcg (trec_eval Rndcg, experimental): nDCG averaged at the R levels of the ideal ranking
--   (ideal_prefixes, by the gains of grade_gains: the grade, or the gains given, Rndcg(gains={1:3.0}),
--   trec_eval Rndcg.1=3). Each depth k where the ideal gain changes between ranks k and k + 1 (its last
--   positive gain, at L, included) contributes DCG(k) / IDCG(k) (dcg_term over the ranking,
--   ranked_gains, and over the ideal); and, where the system retrieved more than L + 1 documents, the
--   end of its ranking contributes DCG(end) / IDCG(L): trec_eval's final implied level change, past
--   which unjudged documents gain 0. The mean of those; 0 for a query without relevant documents.
WITH requested AS (
    SELECT measure
    FROM models.measure_requests
    WHERE family = 'Rndcg'
),

ideal AS (
    SELECT
        i.query,
        i.measure,
        i.rank,
        i.dcg AS ideal_dcg,
        CASE WHEN lead(i.gain) OVER (PARTITION BY i.query, i.measure ORDER BY i.rank) = i.gain THEN 0 ELSE 1 END
            AS level_ends,
        i.positions
    FROM models.ideal_prefixes AS i
    JOIN requested AS m ON m.measure = i.measure
),

-- the depths to average at: the ideal gain's level changes, and the end of a ranking longer than L + 1
depths AS (
    SELECT e.study, e.system, e.query, i.measure, i.rank AS depth, i.ideal_dcg
    FROM models.evaluated_queries AS e
    JOIN ideal AS i ON i.query = e.query
    WHERE i.level_ends = 1
    UNION ALL
    SELECT e.study, e.system, e.query, i.measure, c.num_ret AS depth, i.ideal_dcg
    FROM models.evaluated_queries AS e
    JOIN models.retrieved_counts AS c ON c.system = e.system AND c.query = e.query
    JOIN ideal AS i ON i.query = e.query AND i.rank = i.positions
    WHERE c.num_ret > i.positions + 1
),

points AS (
    SELECT
        d.study,
        d.system,
        d.query,
        d.measure,
        coalesce({{ exact_sum(dcg_term('g.gain', 'g.rank')) }}, 0) / d.ideal_dcg AS ndcg
    FROM depths AS d
    LEFT JOIN models.ranked_gains AS g
        ON g.system = d.system AND g.query = d.query AND g.measure = d.measure AND g.rank <= d.depth
    GROUP BY d.study, d.system, d.query, d.measure, d.depth, d.ideal_dcg
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN e.num_rel > 0 AND count(p.ndcg) > 0 THEN {{ exact_sum('p.ndcg') }} / count(p.ndcg) ELSE 0 END AS value
FROM models.evaluated_queries AS e
CROSS JOIN requested AS m
LEFT JOIN points AS p ON p.system = e.system AND p.query = e.query AND p.measure = m.measure
GROUP BY e.study, e.system, e.query, e.num_rel, m.measure
