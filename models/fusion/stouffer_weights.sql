-- name: stouffer_weights
-- version: 1
-- stage: evaluate
-- grain: fold
-- audits: not_null(fold, relevant_candidates, irrelevant_candidates, delta_bm25, delta_dense, sigma_bm25, sigma_dense, sigma_cross, weight_bm25, weight_dense, monotone); unique_grain; at_least_one_row
-- columns: fold = "The held-out block these weights rank (estimated on every other block)",
--   relevant_candidates = "Relevant candidates of the other blocks' queries", irrelevant_candidates =
--   "Non-relevant candidates of the other blocks' queries", delta_bm25 = "delta_l: the mean z_bm25 of
--   relevant minus non-relevant candidates", delta_dense = "delta_v: the same for z_dense", sigma_bm25 =
--   "The pooled within-class variance of z_bm25", sigma_dense = "The pooled within-class variance of
--   z_dense", sigma_cross = "Their pooled within-class covariance", weight_bm25 = "The BM25 coordinate of
--   Sigma^-1 delta (eq. 5)", weight_dense = "The dense coordinate of Sigma^-1 delta", monotone = "Whether
--   both weights are non-negative: eq. 5 warns that Sigma^-1 delta can have a negative coordinate, and a
--   rule with one lowers the fused score as that arm's score rises"
-- description: Eq. 5's weighted Stouffer with estimated weights (seed 003, section 2), beside the fixed
--   weights of fusion_stouffer: for each held-out block, the shift delta (relevant minus non-relevant mean of
--   z = (z_bm25, z_dense)) and the pooled within-class covariance Sigma of the z values of the complete
--   candidates of every other block's judged queries, and the weights Sigma^-1 delta (a 2 x 2 inverse).
--   Cross-fitted: no query is ranked with weights its own labels helped estimate. A diagnostic comparator,
--   not part of the frozen comparison (the seed builds no explicit weights before the p-only experiment has
--   failed). Sums are exact (exact_sum).
WITH relevant AS (
    SELECT DISTINCT query_key AS query_row, doc_key AS doc_row
    FROM models.judgments
    WHERE grade > 0
),

labelled AS (
    SELECT z.block, z.z_bm25, z.z_dense, r.doc_row IS NOT NULL AS relevant
    FROM models.stouffer_z_values AS z
    LEFT JOIN relevant AS r ON r.query_row = z.query_row AND r.doc_row = z.doc_row
    WHERE z.query_row IN (SELECT query_key FROM models.judgments)
),

block_sums AS (
    SELECT
        block,
        relevant,
        count(*) AS n,
        {{ exact_sum('z_bm25') }} AS l,
        {{ exact_sum('z_dense') }} AS v,
        {{ exact_sum('z_bm25 * z_bm25') }} AS ll,
        {{ exact_sum('z_dense * z_dense') }} AS vv,
        {{ exact_sum('z_bm25 * z_dense') }} AS lv
    FROM labelled
    GROUP BY block, relevant
),

training AS (
    SELECT
        f.block AS fold,
        b.relevant,
        sum(b.n) AS n,
        {{ exact_sum('b.l') }} AS l,
        {{ exact_sum('b.v') }} AS v,
        {{ exact_sum('b.ll') }} AS ll,
        {{ exact_sum('b.vv') }} AS vv,
        {{ exact_sum('b.lv') }} AS lv
    FROM (SELECT DISTINCT block FROM models.stouffer_z_values) AS f
    JOIN block_sums AS b ON b.block <> f.block
    GROUP BY f.block, b.relevant
),

-- Per class: the mean and the scatter (sum of squared deviations) of z.
classes AS (
    SELECT
        fold,
        relevant,
        n,
        l / n AS mean_l,
        v / n AS mean_v,
        ll - l * l / n AS scatter_ll,
        vv - v * v / n AS scatter_vv,
        lv - l * v / n AS scatter_lv
    FROM training
),

estimates AS (
    SELECT
        r.fold,
        r.n AS relevant_candidates,
        i.n AS irrelevant_candidates,
        r.mean_l - i.mean_l AS delta_bm25,
        r.mean_v - i.mean_v AS delta_dense,
        (r.scatter_ll + i.scatter_ll) / (r.n + i.n - 2) AS sigma_bm25,
        (r.scatter_vv + i.scatter_vv) / (r.n + i.n - 2) AS sigma_dense,
        (r.scatter_lv + i.scatter_lv) / (r.n + i.n - 2) AS sigma_cross
    FROM classes AS r
    JOIN classes AS i ON i.fold = r.fold AND NOT i.relevant
    WHERE r.relevant
)

SELECT
    fold,
    relevant_candidates,
    irrelevant_candidates,
    delta_bm25,
    delta_dense,
    sigma_bm25,
    sigma_dense,
    sigma_cross,
    (sigma_dense * delta_bm25 - sigma_cross * delta_dense) / (sigma_bm25 * sigma_dense - sigma_cross * sigma_cross) AS weight_bm25,
    (sigma_bm25 * delta_dense - sigma_cross * delta_bm25) / (sigma_bm25 * sigma_dense - sigma_cross * sigma_cross) AS weight_dense,
    (sigma_dense * delta_bm25 - sigma_cross * delta_dense) / (sigma_bm25 * sigma_dense - sigma_cross * sigma_cross) >= 0
        AND (sigma_bm25 * delta_dense - sigma_cross * delta_bm25) / (sigma_bm25 * sigma_dense - sigma_cross * sigma_cross) >= 0
        AS monotone
FROM estimates
