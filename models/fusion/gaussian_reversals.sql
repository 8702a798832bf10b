-- name: gaussian_reversals
-- version: 1
-- stage: evaluate
-- grain: pairs, query_group
-- audits: not_null(pairs, query_group, queries, pair_count, measured_dense_correct, measured_fused_correct, reversals, corrections); unique_grain; accepted_range(measured_dense_correct, 0, 1); accepted_range(measured_fused_correct, 0, 1); at_least_one_row
-- parameters: rrf_k = 60
-- columns: pairs = "all: every (relevant, non-relevant) pair of a judged query's candidates; near_top: those
--   with a document in the dense or the RRF top 10", query_group = "The queries' group (fusion_query_groups),
--   or all", pair_count = "The pairs", lexical_mean = "mu_l, the mean BM25 vote margin X_l(g) - X_l(b)",
--   dense_mean = "mu_v, the mean dense vote margin", lexical_sd = "sigma_l (population)", dense_sd =
--   "sigma_v", rho = "The margins' correlation", delta_l = "mu_l / sigma_l", delta_v = "mu_v / sigma_v",
--   eq18_bound = "(sqrt(2 + 2 rho) - 1) delta_v: eq. 18 predicts harm when delta_l is below it",
--   predicted_harm = "delta_l < eq18_bound (eq. 18)", predicted_dense_correct = "Phi(delta_v): the Gaussian
--   P(M_v > 0)", predicted_fused_correct = "Phi((mu_l + mu_v) / sd(M_l + M_v)): the Gaussian P(M_l + M_v >
--   0)", predicted_change = "predicted_fused_correct - predicted_dense_correct (eq. 17 under the Gaussian:
--   negative is harm)", measured_dense_correct = "The share of pairs the dense arm orders right (M_v > 0)",
--   measured_fused_correct = "The share RRF orders right (its exact score of g above b's)",
--   measured_change = "measured_fused_correct - measured_dense_correct (eq. 17: negative is harm)",
--   measured_harm = "measured_change < 0", dense_ties = "Share of pairs with M_v = 0 (neither or both
--   unlisted at the same vote)", fused_ties = "Share of pairs RRF scores equal (the tie order decides)",
--   reversals = "Pairs the dense arm orders right and RRF reverses (eq. 15)", corrections = "Pairs the
--   dense arm orders wrong and RRF puts right"
-- description: The Gaussian approximation of seed 003 (eq. 18, 19) against the empirical reversal
--   probabilities (eq. 15, 17), per query group and over all: for every judged (relevant g, non-relevant b)
--   pair of a query's candidates, the implemented RRF votes' margins M_a = X_a(g) - X_a(b), X_a = 1 / (k +
--   rank) within the arm's list and 0 outside it; their means, population standard deviations and
--   correlation give delta_l, delta_v and rho, eq. 18's bound and the Gaussian P(M_v > 0) and P(M_l + M_v
--   > 0) (eq. 19 is the same comparison for three arms; these studies have two); beside them the
--   measured shares, with RRF's exact scores (fusion_rrf) deciding its order. Near-top pairs (a document
--   in either top 10) are checked apart: the seed keeps the exact replay where the approximation
--   mispredicts them. Sums are exact (exact_sum); Phi is sql/macros/distributions.sql normal_cdf.
WITH relevant AS (
    SELECT DISTINCT query_key AS query_row, doc_key AS doc_row
    FROM models.judgments
    WHERE grade > 0
),

judged AS (
    SELECT DISTINCT query_key AS query_row
    FROM models.judgments
),

-- X_a of eq. 15: the vote the implemented RRF gives, 1 / (k + rank) inside the arm's list, 0 outside.
candidates AS (
    SELECT
        c.query_row,
        c.doc_row,
        max(CASE WHEN c.arm = 'bm25' THEN CASE WHEN c.listed THEN 1e0 / ({{ rrf_k }} + c.rank) ELSE 0e0 END END) AS lexical_vote,
        max(CASE WHEN c.arm = 'dense' THEN CASE WHEN c.listed THEN 1e0 / ({{ rrf_k }} + c.rank) ELSE 0e0 END END) AS dense_vote
    FROM models.fusion_candidates AS c
    JOIN judged AS q ON q.query_row = c.query_row
    GROUP BY c.query_row, c.doc_row
),

described AS (
    SELECT
        c.query_row,
        c.doc_row,
        c.lexical_vote,
        c.dense_vote,
        f.score AS rrf_score,
        r.doc_row IS NOT NULL AS relevant,
        coalesce(t.near_top, false) AS near_top
    FROM candidates AS c
    JOIN models.fusion_rrf AS f ON f.query_row = c.query_row AND f.doc_row = c.doc_row
    LEFT JOIN relevant AS r ON r.query_row = c.query_row AND r.doc_row = c.doc_row
    LEFT JOIN (
        SELECT query_row, doc_row, true AS near_top
        FROM models.fused_rankings
        WHERE rule IN ('dense', 'rrf') AND rank <= 10
        GROUP BY query_row, doc_row
    ) AS t ON t.query_row = c.query_row AND t.doc_row = c.doc_row
),

margins AS (
    SELECT
        g.query_row,
        g.near_top OR b.near_top AS near_top,
        g.lexical_vote - b.lexical_vote AS lexical_margin,
        g.dense_vote - b.dense_vote AS dense_margin,
        CASE WHEN g.rrf_score > b.rrf_score THEN 1 WHEN g.rrf_score < b.rrf_score THEN -1 ELSE 0 END AS fused_sign
    FROM described AS g
    JOIN described AS b ON b.query_row = g.query_row AND NOT b.relevant
    WHERE g.relevant
),

per_query AS (
    SELECT
        p.pairs,
        m.query_row,
        count(*) AS pair_count,
        {{ exact_sum('m.lexical_margin') }} AS lexical_sum,
        {{ exact_sum('m.dense_margin') }} AS dense_sum,
        {{ exact_sum('m.lexical_margin * m.lexical_margin') }} AS lexical_squares,
        {{ exact_sum('m.dense_margin * m.dense_margin') }} AS dense_squares,
        {{ exact_sum('m.lexical_margin * m.dense_margin') }} AS cross_products,
        count(*) FILTER (WHERE m.dense_margin > 0) AS dense_correct,
        count(*) FILTER (WHERE m.dense_margin = 0) AS dense_ties,
        count(*) FILTER (WHERE m.fused_sign > 0) AS fused_correct,
        count(*) FILTER (WHERE m.fused_sign = 0) AS fused_ties,
        count(*) FILTER (WHERE m.dense_margin > 0 AND m.fused_sign < 0) AS reversals,
        count(*) FILTER (WHERE m.dense_margin < 0 AND m.fused_sign > 0) AS corrections
    FROM margins AS m
    JOIN (SELECT 'all' AS pairs UNION ALL SELECT 'near_top' AS pairs) AS p ON p.pairs = 'all' OR m.near_top
    GROUP BY p.pairs, m.query_row
),

grouped AS (
    SELECT q.*, g.query_group FROM per_query AS q JOIN models.fusion_query_groups AS g ON g.query_row = q.query_row
    UNION ALL
    SELECT q.*, 'all' AS query_group FROM per_query AS q
),

sums AS (
    SELECT
        pairs,
        query_group,
        count(*) AS queries,
        sum(pair_count) AS pair_count,
        {{ exact_sum('lexical_sum') }} AS lexical_sum,
        {{ exact_sum('dense_sum') }} AS dense_sum,
        {{ exact_sum('lexical_squares') }} AS lexical_squares,
        {{ exact_sum('dense_squares') }} AS dense_squares,
        {{ exact_sum('cross_products') }} AS cross_products,
        sum(dense_correct) AS dense_correct,
        sum(dense_ties) AS dense_ties,
        sum(fused_correct) AS fused_correct,
        sum(fused_ties) AS fused_ties,
        sum(reversals) AS reversals,
        sum(corrections) AS corrections
    FROM grouped
    GROUP BY pairs, query_group
),

moments AS (
    SELECT
        *,
        lexical_sum / pair_count AS lexical_mean,
        dense_sum / pair_count AS dense_mean,
        sqrt(greatest(lexical_squares / pair_count - (lexical_sum / pair_count) * (lexical_sum / pair_count), 0)) AS lexical_sd,
        sqrt(greatest(dense_squares / pair_count - (dense_sum / pair_count) * (dense_sum / pair_count), 0)) AS dense_sd,
        cross_products / pair_count - (lexical_sum / pair_count) * (dense_sum / pair_count) AS covariance
    FROM sums
),

gaussian AS (
    SELECT
        *,
        covariance / nullif(lexical_sd * dense_sd, 0) AS rho,
        lexical_mean / nullif(lexical_sd, 0) AS delta_l,
        dense_mean / nullif(dense_sd, 0) AS delta_v,
        (lexical_mean + dense_mean)
            / nullif(sqrt(greatest(lexical_sd * lexical_sd + dense_sd * dense_sd + 2 * covariance, 0)), 0) AS fused_delta
    FROM moments
)

SELECT
    pairs,
    query_group,
    queries,
    pair_count,
    lexical_mean,
    dense_mean,
    lexical_sd,
    dense_sd,
    rho,
    delta_l,
    delta_v,
    (sqrt(2 + 2 * rho) - 1) * delta_v AS eq18_bound,
    delta_l < (sqrt(2 + 2 * rho) - 1) * delta_v AS predicted_harm,
    {{ normal_cdf('delta_v') }} AS predicted_dense_correct,
    {{ normal_cdf('fused_delta') }} AS predicted_fused_correct,
    {{ normal_cdf('fused_delta') }} - {{ normal_cdf('delta_v') }} AS predicted_change,
    dense_correct / pair_count AS measured_dense_correct,
    fused_correct / pair_count AS measured_fused_correct,
    (fused_correct - dense_correct) / pair_count AS measured_change,
    fused_correct < dense_correct AS measured_harm,
    dense_ties / pair_count AS dense_ties,
    fused_ties / pair_count AS fused_ties,
    reversals,
    corrections
FROM gaussian
