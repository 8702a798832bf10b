-- name: evidence_objective
-- version: 2
-- stage: prepare
-- grain: bundle, method, task_id, rank
-- audits: not_null(bundle, method, task_id, rank, doc_id, coverage, penalty, objective, gain); unique_grain
-- description: Seed 000's objective F (the coverage_objective macro) along every label-free selection:
--   for S_k, the first k selected documents, coverage = sum over facets f of max_{d in S_k} g(f, d),
--   penalty = sum over unordered pairs {d, e} in S_k of p(d, e), objective F(S_k) = (coverage -
--   penalty) / (m + 1), and gain = F(S_k) - F(S_(k-1)) with F of the empty set 0: for `coverage`, the
--   score of each greedy step, recomputed here in SQL from the same inputs as the UDF.
WITH prefixes AS (
    SELECT s.bundle, s.method, s.task_id, k.rank AS k, s.doc_id
    FROM models.evidence_selections AS s
    JOIN models.evidence_selections AS k
        ON k.bundle = s.bundle AND k.method = s.method AND k.task_id = s.task_id AND s.rank <= k.rank
),

objective AS (
    {{ coverage_objective('prefixes', 'models.evidence_facet_gains', 'models.evidence_pair_penalties') | indent(4) }}
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
