-- name: null_calibration
-- version: 1
-- stage: evaluate
-- grain: reference, arm, level, stratum, stratum_value
-- audits: not_null(reference, arm, level, stratum, stratum_value, queries, null_rows, null_admitted, null_share, gold_rows, gold_rejected, null_at_floor, gold_at_floor, anti_conservative); unique_grain; accepted_range(null_share, 0, 1); accepted_range(gold_rejection, 0, 1); at_least_one_row
-- parameters: calibration_levels = [0.01, 0.05, 0.1]
-- columns: reference = "panel (the study's frozen reference: the query against its random panel) or pooled
--   (the retained real queries of the other blocks, held out by block; arms only)", level = "The predeclared level
--   alpha: a row is admitted when its p-value is at most alpha", stratum = "What the rows are split by: all,
--   block, query_length, document_length or lexical", stratum_value = "The stratum's value (a block, short,
--   medium, long, match, non-match; all)", null_rows = "Held-out null rows: sample documents not relevant
--   to the query (lexical non-matches included)", null_admitted = "Null rows with p at most the level",
--   null_share = "null_admitted / null_rows: at most the level if the null is calibrated", null_ci_low =
--   "The share's 95% interval by query clusters, low end", null_ci_high = "The share's 95% interval by
--   query clusters, high end", gold_rows = "Relevant documents of the queries", gold_rejected = "Relevant
--   documents with p above the level (admission at the level rejects them)", gold_rejection =
--   "gold_rejected / gold_rows", gold_ci_low = "gold_rejection's interval by query clusters, low end",
--   gold_ci_high = "gold_rejection's interval by query clusters, high end", null_at_floor = "Share of the
--   null rows at the p-value floor 1/(m + 1) (tail saturation)", gold_at_floor = "Share of the gold rows at
--   the floor", anti_conservative = "Whether the share's interval lies above the level (the gate of section
--   9: reject fixed-p admission there)"
-- description: Null calibration at the predeclared levels (seed 003, section 9): per reference, arm (bm25,
--   dense, and the mixture's combined p-value min(1, 1/E)) and level, the share of held-out null rows
--   admitted (p <= level; calibrated when at most the level), with its 95% interval by query clusters
--   (cluster_ratio: the queries are the units, never the pairs), and beside it gold rejection (the share
--   of relevant documents with p above the level) and tail saturation (shares at the p floor). Over all
--   rows and per stratum these corpora have: the query's held-out block, its length tertile, the
--   document's length tertile, and lexical match (BM25 > 0) or non-match; both corpora have one corpus
--   group and one row type, so those strata are the whole. anti_conservative marks an interval wholly
--   above the level.
-- One pass over the rows: per query and cell (document length, lexical match), the counts of each
-- reference at each level as columns, then one row per reference and level.
WITH cells AS (
    SELECT
        arm,
        query_row,
        document_length_bin,
        lexical_match,
        count(*) FILTER (WHERE held_out AND NOT relevant) AS null_rows,
        count(*) FILTER (WHERE relevant) AS gold_rows
        {%- for reference in ["panel", "pooled"] %},
        count(*) FILTER (WHERE held_out AND NOT relevant AND {{ reference }}_floor) AS {{ reference }}_null_floor,
        count(*) FILTER (WHERE relevant AND {{ reference }}_floor) AS {{ reference }}_gold_floor
        {%- for level in calibration_levels %},
        count(*) FILTER (WHERE held_out AND NOT relevant AND {{ reference }}_p <= {{ level }}) AS {{ reference }}_null_admitted_{{ loop.index }},
        count(*) FILTER (WHERE relevant AND {{ reference }}_p > {{ level }}) AS {{ reference }}_gold_rejected_{{ loop.index }}
        {%- endfor %}
        {%- endfor %}
    FROM models.calibration_scores
    GROUP BY arm, query_row, document_length_bin, lexical_match
),

by_level AS (
    {%- for reference in ["panel", "pooled"] %}
    {%- set outer = loop %}
    {%- for level in calibration_levels %}
    SELECT
        arm,
        query_row,
        document_length_bin,
        lexical_match,
        {{ reference | literal }} AS reference,
        CAST({{ level }} AS DOUBLE) AS level,
        null_rows,
        {{ reference }}_null_admitted_{{ loop.index }} AS null_admitted,
        {{ reference }}_null_floor AS null_floor,
        gold_rows,
        {{ reference }}_gold_rejected_{{ loop.index }} AS gold_rejected,
        {{ reference }}_gold_floor AS gold_floor
    FROM cells
    {%- if reference == "pooled" %}
    WHERE arm <> 'mixture'  -- the mixture is the deployed rule over the frozen reference only
    {%- endif %}
    {%- if not (loop.last and outer.last) %}
    UNION ALL
    {%- endif %}
    {%- endfor %}
    {%- endfor %}
),

strata AS (
    SELECT c.*, 'all' AS stratum, 'all' AS stratum_value FROM by_level AS c
    UNION ALL
    SELECT c.*, 'block', CAST(g.block AS VARCHAR) FROM by_level AS c JOIN models.fusion_query_groups AS g ON g.query_row = c.query_row
    UNION ALL
    SELECT c.*, 'query_length', g.length_bin FROM by_level AS c JOIN models.fusion_query_groups AS g ON g.query_row = c.query_row
    UNION ALL
    SELECT c.*, 'document_length', c.document_length_bin FROM by_level AS c
    UNION ALL
    SELECT c.*, 'lexical', CASE WHEN c.lexical_match THEN 'match' ELSE 'non-match' END FROM by_level AS c
),

per_query AS (
    SELECT
        reference,
        arm,
        level,
        stratum,
        stratum_value,
        query_row,
        sum(null_rows) AS null_rows,
        sum(null_admitted) AS null_admitted,
        sum(null_floor) AS null_floor,
        sum(gold_rows) AS gold_rows,
        sum(gold_rejected) AS gold_rejected,
        sum(gold_floor) AS gold_floor
    FROM strata
    GROUP BY reference, arm, level, stratum, stratum_value, query_row
),

shares AS (
    SELECT reference, arm, level, stratum, stratum_value, 'null' AS share, query_row, null_admitted AS numerator, null_rows AS denominator
    FROM per_query
    UNION ALL
    SELECT reference, arm, level, stratum, stratum_value, 'gold' AS share, query_row, gold_rejected, gold_rows
    FROM per_query
),

{{ cluster_ratio('intervals', 'shares', ['reference', 'arm', 'level', 'stratum', 'stratum_value', 'share']) }},

totals AS (
    SELECT
        reference,
        arm,
        level,
        stratum,
        stratum_value,
        count(DISTINCT query_row) AS queries,
        sum(null_rows) AS null_rows,
        sum(null_admitted) AS null_admitted,
        sum(null_floor) AS null_floor,
        sum(gold_rows) AS gold_rows,
        sum(gold_rejected) AS gold_rejected,
        sum(gold_floor) AS gold_floor
    FROM per_query
    WHERE null_rows > 0 OR gold_rows > 0
    GROUP BY reference, arm, level, stratum, stratum_value
)

SELECT
    t.reference,
    t.arm,
    t.level,
    t.stratum,
    t.stratum_value,
    t.queries,
    t.null_rows,
    t.null_admitted,
    coalesce(n.ratio, 0) AS null_share,
    n.ci_low AS null_ci_low,
    n.ci_high AS null_ci_high,
    t.gold_rows,
    t.gold_rejected,
    g.ratio AS gold_rejection,
    g.ci_low AS gold_ci_low,
    g.ci_high AS gold_ci_high,
    CASE WHEN t.null_rows > 0 THEN t.null_floor / t.null_rows ELSE 0 END AS null_at_floor,
    CASE WHEN t.gold_rows > 0 THEN t.gold_floor / t.gold_rows ELSE 0 END AS gold_at_floor,
    coalesce(n.ci_low > t.level, false) AS anti_conservative
FROM totals AS t
LEFT JOIN intervals AS n
    ON n.share = 'null' AND n.reference = t.reference AND n.arm = t.arm AND n.level = t.level
    AND n.stratum = t.stratum AND n.stratum_value = t.stratum_value
LEFT JOIN intervals AS g
    ON g.share = 'gold' AND g.reference = t.reference AND g.arm = t.arm AND g.level = t.level
    AND g.stratum = t.stratum AND g.stratum_value = t.stratum_value
