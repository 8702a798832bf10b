-- name: relevance_by_score
-- version: 1
-- stage: evaluate
-- grain: rule, bin
-- audits: not_null(rule, bin, candidates, relevant, score_low, score_high, score_mean, ratio, clusters); unique_grain; accepted_range(ratio, 0, 1); at_least_one_row
-- parameters: score_bins = 10
-- columns: bin = "The score bin, 0 (lowest scores) to score_bins - 1 (highest)", score_low = "The bin's
--   lowest score", score_high = "The bin's highest score", score_mean = "The mean score of the bin's
--   candidates", ratio = "The share of the bin's candidates that are relevant (empirical relevance)",
--   standard_error = "The share's standard error by query clusters", clusters = "Queries with candidates in
--   the bin"
-- description: Empirical relevance as a function of the fused score S (seed 003, section 9: the relevance
--   model; for the mixture, S = log E of eq. 10): per rule and arm, every candidate of every judged query in
--   one of score_bins bins of S, and the share of relevant candidates in each bin with its 95% interval by
--   query clusters (cluster_ratio). Bin edges are the scores at positions ceil(k n / score_bins) of the
--   rule's n candidates sorted by score (label-free, fixed before any result); a candidate's bin is the
--   number of edges strictly below its score, so equal scores share a bin (a bin may be empty). The
--   seed's assumption 3 is refuted if relevance does not increase with S.
WITH scored AS (
    SELECT rule, query_row, doc_row, score
    FROM models.fused_rankings
    WHERE query_row IN (SELECT query_key FROM models.judgments)
),

ordered AS (
    SELECT
        rule,
        score,
        row_number() OVER (PARTITION BY rule ORDER BY score, query_row, doc_row) AS position,
        count(*) OVER (PARTITION BY rule) AS candidates
    FROM scored
),

edges AS (
    SELECT
        rule
        {%- for k in range(1, score_bins) %},
        max(CASE WHEN position = CAST(ceil({{ k }} * candidates / {{ score_bins }}.0) AS BIGINT) THEN score END) AS edge_{{ k }}
        {%- endfor %}
    FROM ordered
    GROUP BY rule
),

relevant AS (
    SELECT DISTINCT query_key AS query_row, doc_key AS doc_row
    FROM models.judgments
    WHERE grade > 0
),

binned AS (
    SELECT
        s.rule,
        s.query_row,
        s.score,
        {% for k in range(1, score_bins) %}CASE WHEN s.score > e.edge_{{ k }} THEN 1 ELSE 0 END{{ " + " if not loop.last }}{% endfor %} AS bin,
        r.doc_row IS NOT NULL AS relevant
    FROM scored AS s
    JOIN edges AS e ON e.rule = s.rule
    LEFT JOIN relevant AS r ON r.query_row = s.query_row AND r.doc_row = s.doc_row
),

per_query AS (
    SELECT rule, bin, query_row, count(*) FILTER (WHERE relevant) AS numerator, count(*) AS denominator
    FROM binned
    GROUP BY rule, bin, query_row
),

{{ cluster_ratio('intervals', 'per_query', ['rule', 'bin']) }},

ranges AS (
    SELECT rule, bin, min(score) AS score_low, max(score) AS score_high, {{ mean('score') }} AS score_mean
    FROM binned
    GROUP BY rule, bin
)

SELECT
    i.rule,
    i.bin,
    i.denominator AS candidates,
    i.numerator AS relevant,
    r.score_low,
    r.score_high,
    r.score_mean,
    i.ratio,
    i.standard_error,
    i.ci_low,
    i.ci_high,
    i.clusters
FROM intervals AS i
JOIN ranges AS r ON r.rule = i.rule AND r.bin = i.bin
