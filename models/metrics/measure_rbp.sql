-- name: measure_rbp
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: RBP(p=x) (Moffat and Zobel 2008, "Rank-biased precision for measurement of retrieval
--   effectiveness"; trec_eval rbp.p=x, p 0.9 by default there, 0.8 in ir_measures): (1 - p) times the
--   sum over the ranking of gain p^(k - 1) at rank k, the gain the grade (graded, as ir_measures' RBP
--   without rel), divided by the query's highest grade where that is above 1 (trec_eval normalizes the
--   gains to [0, 1]). rbp_resid(p=x) (trec_eval rbp_resid): the most RBP could rise if every unjudged
--   document ranked (not in the judgments, or a negative grade) had the highest gain: p^n + (1 - p) times
--   the sum of p^(k - 1) over their ranks, n the documents retrieved; 0 where every ranked document is
--   judged. The unjudged ranks are the gaps between the judged ones (and before the first, after the
--   last up to n): a gap from rank a + 1 to b - 1 adds (p^a - p^(b - 1)) / (1 - p), a sum of positive
--   terms (subtracting the judged ranks' sum from all n cancels digits).
WITH requested AS (
    SELECT m.measure, m.family, p.value AS p
    FROM models.measure_requests AS m
    JOIN models.measure_parameters AS p ON p.measure = m.measure AND p.name = 'p'
    WHERE m.family IN ('RBP', 'rbp_resid')
),

top_grades AS (
    SELECT query_id AS query, greatest(max(grade), 1) AS top_grade
    FROM models.judgments
    GROUP BY query_id
),

judged AS (
    SELECT
        j.system,
        j.query,
        j.rank,
        j.grade,
        lead(j.rank) OVER (PARTITION BY j.system, j.query ORDER BY j.rank) AS next_rank,
        min(j.rank) OVER (PARTITION BY j.system, j.query) AS first_rank,
        t.top_grade
    FROM models.judged_ranking AS j
    JOIN top_grades AS t ON t.query = j.query
    WHERE j.grade >= 0
),

-- per judged document: its gain's share of RBP, and the unjudged ranks up to the next judged one (or n)
sums AS (
    SELECT
        j.system,
        j.query,
        m.measure,
        {{ exact_sum('CASE WHEN j.grade > 0 THEN j.grade / j.top_grade * pow(m.p, j.rank - 1) ELSE 0 END') }} AS gained,
        {{ exact_sum('pow(m.p, j.rank) - pow(m.p, coalesce(j.next_rank, c.num_ret + 1) - 1)') }}
            + 1 - pow(m.p, min(j.first_rank) - 1) AS unjudged,
        count(*) AS judged_documents
    FROM judged AS j
    CROSS JOIN requested AS m
    LEFT JOIN models.retrieved_counts AS c ON c.system = j.system AND c.query = j.query
    GROUP BY j.system, j.query, m.measure, m.p
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE
        WHEN m.family = 'RBP' THEN (1 - m.p) * coalesce(s.gained, 0)
        WHEN coalesce(c.num_ret, 0) > coalesce(s.judged_documents, 0)
            THEN pow(m.p, c.num_ret) + coalesce(s.unjudged, 1 - pow(m.p, c.num_ret))
        ELSE 0
    END AS value
FROM models.evaluated_queries AS e
CROSS JOIN requested AS m
LEFT JOIN sums AS s ON s.system = e.system AND s.query = e.query AND s.measure = m.measure
LEFT JOIN models.retrieved_counts AS c ON c.system = e.system AND c.query = e.query
