-- name: measure_set
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain
-- description: The measures of the retrieved set as a whole (trec_eval's set measures), from num_ret
--   (retrieved_counts), R (relevant, evaluated_queries) and num_rel_ret (relevant retrieved): SetP
--   (set_P) num_rel_ret / num_ret; SetP(relative=True) (set_relative_P) num_rel_ret / min(num_ret, R);
--   SetR (set_recall) num_rel_ret / R; SetAP (set_map) num_rel_ret^2 / (num_ret R); SetF(beta=x) (set_F.x)
--   (x + 1) P R / (x P + R) of those P and R, x 1 by default; each 0 where its denominator is. utility
--   (trec_eval utility.a,b,c,d) a num_rel_ret + b (num_ret - num_rel_ret) + c (R - num_rel_ret) + d
--   (N + num_rel_ret - num_ret - R), weights (1, -1, 0, 0) by default and N, the documents in the
--   collection, 0 (trec_eval's without -N). A query the system did not answer (kept by complete)
--   scores 0 on each, as trec_eval leaves it.
WITH relevant_retrieved AS (
    SELECT system, query, count(*) AS num_rel_ret
    FROM models.judged_ranking
    WHERE relevant
    GROUP BY system, query
),

settings AS (
    SELECT
        m.measure,
        m.family,
        max(CASE WHEN p.name = 'relative' THEN p.value END) AS relative,
        max(CASE WHEN p.name = 'beta' THEN p.value END) AS beta,
        max(CASE WHEN p.name = 'a' THEN p.value END) AS a,
        max(CASE WHEN p.name = 'b' THEN p.value END) AS b,
        max(CASE WHEN p.name = 'c' THEN p.value END) AS c,
        max(CASE WHEN p.name = 'd' THEN p.value END) AS d
    FROM models.measure_requests AS m
    LEFT JOIN models.measure_parameters AS p ON p.measure = m.measure
    WHERE m.family IN ('SetP', 'SetR', 'SetAP', 'SetF', 'utility')
    GROUP BY m.measure, m.family
),

counts AS (
    SELECT
        e.study,
        e.system,
        e.query,
        CAST(coalesce(c.num_ret, 0) AS DOUBLE) AS num_ret,
        CAST(e.num_rel AS DOUBLE) AS num_rel,
        CAST(coalesce(r.num_rel_ret, 0) AS DOUBLE) AS num_rel_ret
    FROM models.evaluated_queries AS e
    LEFT JOIN models.retrieved_counts AS c ON c.system = e.system AND c.query = e.query
    LEFT JOIN relevant_retrieved AS r ON r.system = e.system AND r.query = e.query
)

SELECT
    n.study,
    n.system,
    n.query,
    s.measure,
    CASE
        WHEN n.num_ret = 0 THEN 0
        WHEN s.family = 'SetP' AND s.relative = 1 THEN
            CASE WHEN n.num_rel > 0 THEN n.num_rel_ret / least(n.num_ret, n.num_rel) ELSE 0 END
        WHEN s.family = 'SetP' THEN n.num_rel_ret / n.num_ret
        WHEN n.num_rel = 0 AND s.family <> 'utility' THEN 0
        WHEN s.family = 'SetR' THEN n.num_rel_ret / n.num_rel
        WHEN s.family = 'SetAP' THEN n.num_rel_ret * n.num_rel_ret / (n.num_ret * n.num_rel)
        WHEN s.family = 'SetF' THEN
            CASE WHEN n.num_rel_ret > 0 THEN
                (s.beta + 1) * (n.num_rel_ret / n.num_ret) * (n.num_rel_ret / n.num_rel)
                / (s.beta * (n.num_rel_ret / n.num_ret) + n.num_rel_ret / n.num_rel)
            ELSE 0 END
        ELSE s.a * n.num_rel_ret + s.b * (n.num_ret - n.num_rel_ret) + s.c * (n.num_rel - n.num_rel_ret)
            + s.d * (n.num_rel_ret - n.num_ret - n.num_rel)
    END AS value
FROM counts AS n
CROSS JOIN settings AS s
