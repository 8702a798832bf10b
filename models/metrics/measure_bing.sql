-- name: measure_bing
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: binG (trec_eval binG, an experimental measure of 2008): G with binary gains. Each relevant
--   document retrieved at rank k, with r relevant documents above it, adds 1 / log2(2 + k - 1 - r): a
--   discount by the non-relevant documents (judged or not) above it only; the sum over the R relevant
--   documents, divided by R (0 where none is retrieved).
WITH sums AS (
    SELECT system, query, {{ exact_sum('1.0 / log2(2 + rank - relevant_so_far)') }} AS gain
    FROM models.relevant_ranks
    GROUP BY system, query
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN e.num_rel > 0 THEN coalesce(s.gain, 0) / e.num_rel ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'binG'
LEFT JOIN sums AS s ON s.system = e.system AND s.query = e.query
