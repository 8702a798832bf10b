-- name: measure_rprec
-- version: 4
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, 1)
-- description: Rprec: precision at rank R, R being the number of relevant documents of the query;
--   0 for a query without relevant documents. Rprec_mult@m (trec_eval Rprec_mult.m): precision at
--   rank c = (long)(m R + 0.9), trec_eval's rounding of m R (so Rprec_mult@1.0 is Rprec), c counted
--   even where fewer were retrieved; 0 where c is 0. Rprec_mult_avgjg@m is Rprec_mult@m against each
--   judgment group's qrels (trec_eval -R qrels_jg), which measure_avgjg averages over a topic's groups.
WITH depths AS (
    SELECT
        e.study,
        e.system,
        e.query,
        m.measure,
        CASE WHEN m.family = 'Rprec' THEN e.num_rel ELSE floor(m.cutoff * e.num_rel + 0.9) END AS depth
    FROM models.evaluated_queries AS e
    JOIN models.measure_requests AS m ON m.family IN ('Rprec', 'Rprec_mult', 'Rprec_mult_avgjg')
)

SELECT
    d.study,
    d.system,
    d.query,
    d.measure,
    CASE WHEN d.depth > 0 THEN count(*) FILTER (WHERE j.relevant) / d.depth ELSE 0 END AS value
FROM depths AS d
LEFT JOIN models.judged_ranking AS j
    ON j.system = d.system AND j.query = d.query AND j.rank <= d.depth
GROUP BY d.study, d.system, d.query, d.measure, d.depth
