-- name: measure_ap
-- version: 4
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: AP (trec_eval map): the mean, over all relevant documents of the query, of the
--   precision at the rank of each one retrieved (unretrieved ones add 0). AP@k (map_cut.k) counts
--   the first k documents only. GMAP has AP as its per-query value and is averaged geometrically.
--   AP(rel=g) counts grades >= g as relevant, among the ranked documents and in the judgments
--   (relevant_counts), instead of the relevance level's. map_avgjg is AP against each judgment group's
--   qrels (trec_eval -R qrels_jg), which measure_avgjg averages over a topic's groups.
WITH relevant_ranks AS (
    SELECT
        j.system,
        j.query,
        m.measure,
        j.rank,
        row_number() OVER (PARTITION BY j.system, j.query, m.measure ORDER BY j.rank) AS relevant_so_far
    FROM models.judged_ranking AS j
    JOIN models.measure_requests AS m ON m.family IN ('AP', 'GMAP', 'map_avgjg')
    WHERE {{ is_relevant() }}
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CASE
        WHEN coalesce(c.num_rel, e.num_rel) > 0
            THEN coalesce({{ exact_sum('r.relevant_so_far / r.rank') }}, 0) / coalesce(c.num_rel, e.num_rel)
        ELSE 0
    END AS value
FROM models.evaluated_queries AS e
JOIN models.measure_requests AS m ON m.family IN ('AP', 'GMAP', 'map_avgjg')
LEFT JOIN models.relevant_counts AS c ON c.query = e.query AND c.measure = m.measure
LEFT JOIN relevant_ranks AS r
    ON r.system = e.system AND r.query = e.query AND r.measure = m.measure
    AND (m.cutoff IS NULL OR r.rank <= m.cutoff)
GROUP BY e.study, e.system, e.query, e.num_rel, c.num_rel, m.measure
