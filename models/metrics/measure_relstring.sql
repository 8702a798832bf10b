-- name: measure_relstring
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain
-- parameters: judged_only = false
-- description: relstring@k (trec_eval relstring.k, 10 by default): the grades of the first k ranked
--   documents as a string, one character each: the grade 0 to 9 itself, > above 9, . for a negative
--   grade (pooled, not judged), - for a document not in the judgments; shorter where fewer were
--   retrieved, empty for a query the system did not answer. A string, so not in query_measures:
--   rankhouse eval prints it per query only, as trec_eval does.
WITH requested AS (
    SELECT measure, cutoff
    FROM models.measure_requests
    WHERE family = 'relstring'
),

{% if judged_only -%}
-- with judged_only the ranking holds the judged documents only
characters AS (
    SELECT j.system, j.query, m.measure, j.rank, j.grade
    FROM models.judged_ranking AS j
    JOIN requested AS m ON j.rank <= m.cutoff
),
{%- else -%}
queries AS (
    SELECT DISTINCT study, query_key, query_id FROM models.judgments
),

characters AS (
    SELECT r.system, q.query_id AS query, m.measure, r.rank, j.grade
    FROM models.rankings AS r
    JOIN queries AS q ON q.study = r.study AND q.query_key = r.query_key
    JOIN requested AS m ON r.rank <= m.cutoff
    LEFT JOIN models.judgments AS j ON j.study = r.study AND j.query_key = r.query_key AND j.doc_key = r.doc_key
),
{%- endif %}

strings AS (
    SELECT
        system,
        query,
        measure,
        string_agg(
            CASE
                WHEN grade IS NULL THEN '-'
                WHEN grade < 0 THEN '.'
                WHEN grade > 9 THEN '>'
                ELSE CAST(CAST(grade AS BIGINT) AS VARCHAR)
            END,
            '' ORDER BY rank
        ) AS value
    FROM characters
    GROUP BY system, query, measure
)

SELECT e.study, e.system, e.query, m.measure, coalesce(s.value, '') AS value
FROM models.evaluated_queries AS e
CROSS JOIN requested AS m
LEFT JOIN strings AS s ON s.system = e.system AND s.query = e.query AND s.measure = m.measure
