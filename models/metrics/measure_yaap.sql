-- name: measure_yaap
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain
-- description: yaap (trec_eval yaap, in none of its groups; Robertson 2012, "On smoothing average
--   precision", ECIR): ln((1 + S) / (1 + R - S)), S the sum over the relevant documents retrieved of the
--   precision at each (relevant_ranks: relevant so far over the rank; AP is S / R), R the query's relevant
--   documents (evaluated_queries.num_rel): 0 for a query without relevant documents, above 0 where S is
--   above R / 2.
WITH precision_sums AS (
    SELECT study, system, query, {{ exact_sum('relevant_so_far / rank') }} AS precisions
    FROM models.relevant_ranks
    GROUP BY study, system, query
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    ln((1 + coalesce(p.precisions, 0)) / (1 + e.num_rel - coalesce(p.precisions, 0))) AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'yaap'
LEFT JOIN precision_sums AS p ON p.system = e.system AND p.query = e.query
