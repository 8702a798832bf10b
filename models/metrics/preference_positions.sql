-- name: preference_positions
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: study, system, query, docno
-- audits: not_null(study, system, query, docno, retrieved, position); unique_grain
-- parameters: depth = 0, score_precision = "double"
-- description: For each system and query evaluated with preferences (evaluated_queries), every document the
--   query's preferences name (prefs), at its position (from 0) in the order trec_eval counts preferences
--   in (form_prefs_counts.c): first the documents the run retrieved, in its ranking for preferences
--   (trec_prefs_order: score descending, then docno ascending, where trec_order breaks ties by docno
--   descending; the first `depth` documents only with depth > 0, trec_eval -M), then the others by
--   docno. retrieved says which. A preference a > b is fulfilled where a is before b.
WITH judged AS (
    SELECT DISTINCT qid, docno
    FROM models.prefs
),

ranked AS (
    SELECT
        r.run_id AS system,
        r.qid,
        r.docno,
        row_number() OVER (
            PARTITION BY r.run_id, r.qid ORDER BY {{ trec_prefs_order('r.score', 'r.docno', score_precision) }}
        ) AS rank
    FROM models.runs AS r
    {% if depth == 0 -%}
    JOIN judged AS j ON j.qid = r.qid AND j.docno = r.docno
    {%- endif %}
),

retrieved AS (
    SELECT system, qid, docno, rank
    FROM ranked
    {% if depth > 0 -%}
    WHERE rank <= {{ depth }}
    {%- endif %}
)

SELECT
    e.study,
    e.system,
    e.query,
    j.docno,
    r.rank IS NOT NULL AS retrieved,
    row_number() OVER (PARTITION BY e.study, e.system, e.query ORDER BY r.rank NULLS LAST, j.docno) - 1 AS position
FROM models.evaluated_queries AS e
JOIN judged AS j ON j.qid = e.query
LEFT JOIN retrieved AS r ON r.system = e.system AND r.qid = e.query AND r.docno = j.docno
