-- name: measure_infap
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: infAP (Yilmaz and Aslam 2006, "Estimating average precision with incomplete and imperfect
--   judgments"; trec_eval and ir_measures infAP): AP estimated where only a sample of the pool was
--   judged (a negative grade: pooled, not judged; a document not in the judgments: outside the pool).
--   Over the R relevant documents, for each one retrieved at rank k, with r, n and u the relevant,
--   judged non-relevant and pooled-unjudged documents above it: 1 at rank 1, else 1/k + ((k - 1)/k)
--   ((r + n + u)/(k - 1)) ((r + e)/(r + n + 2e)), e = 0.00001 (trec_eval's INFAP_EPSILON): the
--   expected precision above it, documents outside the pool counting as non-relevant and pooled ones
--   as relevant in the proportion of the judged; divided by R (0 without relevant documents).
WITH judged AS (
    SELECT
        system,
        query,
        rank,
        relevant,
        coalesce(sum(CASE WHEN relevant THEN 1 ELSE 0 END) OVER (
            PARTITION BY system, query ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS relevant_above,
        coalesce(sum(CASE WHEN grade >= 0 AND NOT relevant THEN 1 ELSE 0 END) OVER (
            PARTITION BY system, query ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS nonrelevant_above,
        coalesce(sum(CASE WHEN grade < 0 THEN 1 ELSE 0 END) OVER (
            PARTITION BY system, query ORDER BY rank ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS unjudged_above
    FROM models.judged_ranking
),

estimates AS (
    SELECT
        system,
        query,
        CASE
            WHEN rank = 1 THEN 1.0
            ELSE 1.0 / rank + ((rank - 1) / rank) * ((relevant_above + nonrelevant_above + unjudged_above) / (rank - 1))
                * ((relevant_above + 0.00001) / (relevant_above + nonrelevant_above + 2 * 0.00001))
        END AS estimate
    FROM judged
    WHERE relevant
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE WHEN e.num_rel > 0 THEN coalesce({{ exact_sum('x.estimate') }}, 0) / e.num_rel ELSE 0 END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family = 'infAP'
LEFT JOIN estimates AS x ON x.system = e.system AND x.query = e.query
GROUP BY e.study, e.system, e.query, e.num_rel, m.measure
