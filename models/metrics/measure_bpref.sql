-- name: measure_bpref
-- version: 3
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Bpref (Buckley and Voorhees 2004, as trec_eval computes it): over the R relevant
--   documents, the mean of 1 - min(n, R) / min(N, R) for each one retrieved, where n counts the
--   judged non-relevant documents ranked above it and N all judged non-relevant ones; a relevant
--   document with none above it scores 1. Unjudged documents are ignored. gm_bpref (trec_eval gm_bpref) is
--   the same per-query value, combined over queries by its geometric mean (run_measures).
WITH judged AS (
    SELECT
        system,
        query,
        relevant,
        coalesce(sum(CASE WHEN relevant THEN 0 ELSE 1 END) OVER (
            PARTITION BY system, query ORDER BY rank
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS nonrelevant_above
    FROM models.judged_ranking
    WHERE grade >= 0
),

preferences AS (
    SELECT
        j.system,
        j.query,
        CASE
            WHEN j.nonrelevant_above = 0 THEN 1.0
            ELSE 1.0 - least(j.nonrelevant_above, e.num_rel) / least(e.num_judged_nonrel, e.num_rel)
        END AS kept
    FROM judged AS j
    JOIN models.evaluated_queries AS e ON e.system = j.system AND e.query = j.query
    WHERE j.relevant
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN e.num_rel > 0 THEN coalesce({{ exact_sum('p.kept') }}, 0) / e.num_rel ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('Bpref', 'gm_bpref')
LEFT JOIN preferences AS p ON p.system = e.system AND p.query = e.query
GROUP BY e.study, e.system, e.query, e.num_rel, m.measure
