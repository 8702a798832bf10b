-- name: evidence_objective
-- version: 1
-- stage: prepare
-- grain: bundle, method, task_id, rank
-- audits: not_null(bundle, method, task_id, rank, doc_id, coverage, penalty, objective, gain); unique_grain
-- description: Seed 000's objective F along every label-free selection: for S_k, the first k selected
--   documents, coverage = sum over facets f of max_{d in S_k} g(f, d), penalty = sum over unordered
--   pairs {d, e} in S_k of p(d, e), objective F(S_k) = (coverage - penalty) / (m + 1), and gain =
--   F(S_k) - F(S_(k-1)) with F of the empty set 0: for `coverage`, the score of each greedy step,
--   recomputed here in SQL from the same inputs as the UDF.
WITH prefixes AS (
    SELECT s.bundle, s.method, s.task_id, k.rank AS k, s.doc_id
    FROM models.evidence_selections AS s
    JOIN models.evidence_selections AS k
        ON k.bundle = s.bundle AND k.method = s.method AND k.task_id = s.task_id AND s.rank <= k.rank
),

best AS (
    SELECT p.bundle, p.method, p.task_id, p.k, g.facet, max(g.gain) AS best, max(g.facets) AS facets
    FROM prefixes AS p
    JOIN models.evidence_facet_gains AS g ON g.bundle = p.bundle AND g.task_id = p.task_id AND g.doc_id = p.doc_id
    GROUP BY p.bundle, p.method, p.task_id, p.k, g.facet
),

coverage AS (
    SELECT bundle, method, task_id, k, sum(best) AS coverage, max(facets) AS facets
    FROM best
    GROUP BY bundle, method, task_id, k
),

penalties AS (
    SELECT a.bundle, a.method, a.task_id, a.k, sum(p.penalty) AS penalty
    FROM prefixes AS a
    JOIN prefixes AS b
        ON b.bundle = a.bundle AND b.method = a.method AND b.task_id = a.task_id AND b.k = a.k AND b.doc_id > a.doc_id
    JOIN models.evidence_pair_penalties AS p
        ON p.bundle = a.bundle AND p.task_id = a.task_id AND p.doc_a = a.doc_id AND p.doc_b = b.doc_id
    GROUP BY a.bundle, a.method, a.task_id, a.k
),

objective AS (
    SELECT
        c.bundle,
        c.method,
        c.task_id,
        c.k,
        c.coverage,
        coalesce(p.penalty, 0.0) AS penalty,
        (c.coverage - coalesce(p.penalty, 0.0)) / c.facets AS objective
    FROM coverage AS c
    LEFT JOIN penalties AS p ON p.bundle = c.bundle AND p.method = c.method AND p.task_id = c.task_id AND p.k = c.k
)

SELECT
    o.bundle,
    o.method,
    o.task_id,
    o.k AS rank,
    s.doc_id,
    o.coverage,
    o.penalty,
    o.objective,
    o.objective - coalesce(lag(o.objective) OVER (PARTITION BY o.bundle, o.method, o.task_id ORDER BY o.k), 0.0) AS gain
FROM objective AS o
JOIN models.evidence_selections AS s
    ON s.bundle = o.bundle AND s.method = o.method AND s.task_id = o.task_id AND s.rank = o.k
