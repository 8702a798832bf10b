-- name: null_transport
-- version: 1
-- stage: evaluate
-- grain: fold, level, kind
-- audits: not_null(fold, level, kind, queries, rows, exceedance); unique_grain; accepted_range(exceedance, 0, 1); at_least_one_row
-- dialect: duckdb: FLOAT[384] vectors (the document-document cosines and eq. 22's mean vectors)
-- parameters: corpus = "banking77", reference_panel = "null_panel", calibration_levels = [0.01, 0.05, 0.1]
-- columns: fold = "The held-out block whose queries test the transport (its thresholds come from the
--   other blocks), or all (every block tested with its own fold's thresholds)", level = "The level alpha:
--   the threshold is the null's upper alpha quantile", kind = "affine (eq. 24: mu_QD + sigma_QD / sigma_DD
--   (t_DD - mu_DD)) or multiplicative (sigma_QD / sigma_DD t_DD: the intercept taken as negligible)",
--   doc_pairs = "Document-document pairs of the panel (distinct documents, each pair once)", mu_dd =
--   "The mean document-document cosine", sigma_dd = "Its standard deviation (population)", t_dd = "The
--   document-document null's upper alpha quantile (quantile_cont at 1 - alpha)", mu_qd = "The mean cosine of
--   the other blocks' queries with the panel's documents (eq. 22's E(Q.D), as measured)", mu_qd_eq22 =
--   "mu_Q . mu_D, eq. 22 from the mean query and document vectors (equal to mu_qd up to float32 rounding
--   when the vectors are what they claim)", sigma_qd = "The standard deviation of those cosines (eq. 23's
--   Var(Q.D) for the sampled queries and documents)", threshold = "The transported threshold", held_out_quantile
--   = "The held-out block's own upper alpha quantile of its null scores", exceedance = "The share of the
--   held-out null scores at or above the threshold (alpha if the transport is right)", standard_error = "Its
--   standard error by query clusters"
-- description: Document-document nulls transported to the query-document null (seed 003, section 6, eq.
--   22-24), with the held-out validation section 6 asks before they may be used: for the dense arm, the
--   cosines of every pair of distinct panel documents give mu_DD, sigma_DD and the upper alpha quantile
--   t_DD; the other blocks' queries against the same panel give mu_QD and sigma_QD (eq. 22-23 for those
--   vectors: the moments of the products are the closed forms' plug-in values; mu_qd_eq22 checks eq. 22 from
--   the mean vectors); eq. 24 transports t_DD to t_QD = mu_QD + sigma_QD / sigma_DD (t_DD - mu_DD), the
--   multiplicative variant drops the intercept. Each held-out block's null scores (calibration_scores:
--   held-out, non-relevant) then say how many exceed the transported threshold (alpha if the location-scale
--   approximation holds), with a 95% interval by query clusters, beside the block's own empirical quantile.
--   Sums are exact (exact_sum); quantiles are quantile_cont's.
WITH groups AS (
    SELECT query_row, block
    FROM models.fusion_query_groups
),

levels AS (
    {%- for level in calibration_levels %}
    SELECT CAST({{ level }} AS DOUBLE) AS level{{ " UNION ALL" if not loop.last }}
    {%- endfor %}
),

panel_vectors AS (
    SELECT d.doc_row, v.vector::FLOAT[] AS vector
    FROM models.documents AS d
    JOIN models.document_vectors AS v ON v.corpus = d.corpus AND v.doc_id = d.doc_id
    JOIN models.null_panels AS p ON p.corpus = d.corpus AND p.doc_row = d.doc_row
    WHERE d.corpus = {{ corpus | literal }} AND p.panel = {{ reference_panel | literal }}
),

doc_pairs AS (
    SELECT list_inner_product(a.vector, b.vector) AS score
    FROM panel_vectors AS a
    JOIN panel_vectors AS b ON a.doc_row < b.doc_row
),

doc_doc AS (
    SELECT
        count(*) AS doc_pairs,
        {{ exact_sum('score') }} / count(*) AS mu_dd,
        sqrt({{ exact_sum('CAST(score AS DOUBLE) * score') }} / count(*) - ({{ exact_sum('score') }} / count(*)) * ({{ exact_sum('score') }} / count(*))) AS sigma_dd
    FROM doc_pairs
),

doc_doc_quantiles AS (
    {%- for level in calibration_levels %}
    SELECT CAST({{ level }} AS DOUBLE) AS level, {{ quantile('score', (1 - level) | round(12)) }} AS t_dd
    FROM doc_pairs
    {{- " UNION ALL" if not loop.last }}
    {%- endfor %}
),

-- The query-document null of each block (its queries against the panel), then each fold's training
-- moments: every block's sums minus the fold's own.
block_sums AS (
    SELECT
        g.block,
        count(*) AS pairs,
        {{ exact_sum('n.score') }} AS score_sum,
        {{ exact_sum('CAST(n.score AS DOUBLE) * n.score') }} AS square_sum
    FROM models.null_references AS n
    JOIN groups AS g ON g.query_row = n.query_row
    WHERE n.arm = 'dense'
    GROUP BY g.block
),

training AS (
    SELECT
        f.block AS fold,
        sum(b.pairs) AS pairs,
        {{ exact_sum('b.score_sum') }} AS score_sum,
        {{ exact_sum('b.square_sum') }} AS square_sum
    FROM block_sums AS f
    JOIN block_sums AS b ON b.block <> f.block
    GROUP BY f.block
),

query_coordinates AS (
    SELECT g.block, unnest(v.vector::FLOAT[]) AS x, generate_subscripts(v.vector::FLOAT[], 1) AS dimension
    FROM models.queries AS q
    JOIN models.query_vectors AS v ON v.corpus = q.corpus AND v.qid = q.qid
    JOIN groups AS g ON g.query_row = q.query_row
    WHERE q.corpus = {{ corpus | literal }}
),

query_block_sums AS (
    SELECT block, dimension, count(*) AS queries, {{ exact_sum('x') }} AS x_sum
    FROM query_coordinates
    GROUP BY block, dimension
),

training_means AS (
    SELECT f.block AS fold, b.dimension, {{ exact_sum('b.x_sum') }} / sum(b.queries) AS mean_x
    FROM (SELECT DISTINCT block FROM groups) AS f
    JOIN query_block_sums AS b ON b.block <> f.block
    GROUP BY f.block, b.dimension
),

panel_means AS (
    SELECT dimension, {{ mean('x') }} AS mean_x
    FROM (SELECT unnest(vector) AS x, generate_subscripts(vector, 1) AS dimension FROM panel_vectors) AS coordinates
    GROUP BY dimension
),

eq22 AS (
    SELECT t.fold, {{ exact_sum('t.mean_x * p.mean_x') }} AS mu_qd_eq22
    FROM training_means AS t
    JOIN panel_means AS p ON p.dimension = t.dimension
    GROUP BY t.fold
),

thresholds AS (
    SELECT
        t.fold,
        l.level,
        k.kind,
        d.doc_pairs,
        d.mu_dd,
        d.sigma_dd,
        q.t_dd,
        t.score_sum / t.pairs AS mu_qd,
        e.mu_qd_eq22,
        sqrt(t.square_sum / t.pairs - (t.score_sum / t.pairs) * (t.score_sum / t.pairs)) AS sigma_qd
    FROM training AS t
    CROSS JOIN levels AS l
    CROSS JOIN (SELECT 'affine' AS kind UNION ALL SELECT 'multiplicative' AS kind) AS k
    CROSS JOIN doc_doc AS d
    JOIN doc_doc_quantiles AS q ON q.level = l.level
    JOIN eq22 AS e ON e.fold = t.fold
),

transported AS (
    SELECT
        *,
        CASE kind
            WHEN 'affine' THEN mu_qd + sigma_qd / nullif(sigma_dd, 0) * (t_dd - mu_dd)
            ELSE sigma_qd / nullif(sigma_dd, 0) * t_dd
        END AS threshold
    FROM thresholds
),

held_out AS (
    SELECT c.query_row, g.block, c.score
    FROM models.calibration_scores AS c
    JOIN groups AS g ON g.query_row = c.query_row
    WHERE c.arm = 'dense' AND c.held_out AND NOT c.relevant
),

held_out_quantiles AS (
    {%- for level in calibration_levels %}
    SELECT block, CAST({{ level }} AS DOUBLE) AS level, {{ quantile('score', (1 - level) | round(12)) }} AS held_out_quantile
    FROM held_out
    GROUP BY block
    {{- " UNION ALL" if not loop.last }}
    {%- endfor %}
),

per_query AS (
    SELECT
        CAST(t.fold AS VARCHAR) AS fold,
        t.level,
        t.kind,
        h.query_row,
        count(*) FILTER (WHERE h.score >= t.threshold) AS numerator,
        count(*) AS denominator
    FROM held_out AS h
    JOIN transported AS t ON t.fold = h.block
    GROUP BY t.fold, t.level, t.kind, h.query_row
),

folds_and_all AS (
    SELECT * FROM per_query
    UNION ALL
    SELECT 'all' AS fold, level, kind, query_row, numerator, denominator FROM per_query
),

{{ cluster_ratio('exceedances', 'folds_and_all', ['fold', 'level', 'kind']) }}

SELECT
    x.fold,
    x.level,
    x.kind,
    x.clusters AS queries,
    x.denominator AS rows,
    t.doc_pairs,
    t.mu_dd,
    t.sigma_dd,
    t.t_dd,
    t.mu_qd,
    t.mu_qd_eq22,
    t.sigma_qd,
    t.threshold,
    q.held_out_quantile,
    x.ratio AS exceedance,
    x.standard_error,
    x.ci_low,
    x.ci_high
FROM exceedances AS x
LEFT JOIN transported AS t ON CAST(t.fold AS VARCHAR) = x.fold AND t.level = x.level AND t.kind = x.kind
LEFT JOIN held_out_quantiles AS q ON CAST(q.block AS VARCHAR) = x.fold AND q.level = x.level
