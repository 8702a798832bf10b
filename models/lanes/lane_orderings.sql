-- name: lane_orderings
-- version: 2
-- stage: prepare
-- grain: method, corpus, topic, rank
-- audits: not_null(method, corpus, topic, rank, doc_row, doc_id, score, combo, combo_key, narrative_percentile, supported, strong_passages, best_source_rank, k); unique_grain; accepted_range(rank, 1, ); at_least_one_row
-- parameters: narrative_weight = 0.5, facet_weight = 0.5, best_facet_weight = 0.7, second_facet_weight = 0.3
-- description: The three orderings of each topic's candidate set (seed 002, "Ranking variants"); the
--   same C_t and k_t in all three. facet = 0.7 * best + 0.3 * second-best subnarrative percentile (a
--   topic with one subnarrative: its percentile; with none: the narrative percentile), combo = 0.5 *
--   narrative percentile + 0.5 * facet. Orders, each total: combo: combo desc, best source rank,
--   document id; breadth: distinct supported subnarratives desc (with at least one strong kept
--   passage, models.passage_support), strong kept passages desc, combo desc, best source rank,
--   document id; narrative: narrative percentile desc, best source rank, document id. Document ids in
--   UTF-8 byte order. Percentiles are fractions of k_t (unit_scores.at_or_below / k_t), so combo is
--   ranked on its exact numerator, a DECIMAL (combo_key: the weights times the counts): mathematically
--   equal combos tie exactly and the tie chain decides (in doubles, 0.5 * 3/5 + 0.5 * (0.7 * 1/5 + 0.3 *
--   1/5) and 0.5 * 1/5 + 0.5 * (0.7 * 3/5 + 0.3 * 3/5), both 2/5, differ in the last bit). combo and
--   facet are shown as doubles. score = k_t + 1 - rank, strictly decreasing, so that trec_eval (score
--   descending, ties by docno) reads each run file in exactly this order.
{%- for weight in [narrative_weight, facet_weight, best_facet_weight, second_facet_weight] %}
{{- require(weight | round(9) == weight, "lane weights are exact with at most 9 decimals, not " ~ weight) }}
{%- endfor %}
WITH narrative AS (
    SELECT corpus, topic, doc_id, percentile, at_or_below, candidates
    FROM models.unit_scores
    WHERE unit = 'narrative'
),

facets AS (
    SELECT
        corpus,
        topic,
        doc_id,
        at_or_below,
        row_number() OVER (PARTITION BY corpus, topic, doc_id ORDER BY at_or_below DESC, unit) AS position,
        count(*) OVER (PARTITION BY corpus, topic, doc_id) AS subnarratives
    FROM models.unit_scores
    WHERE unit <> 'narrative'
),

facet AS (
    SELECT
        corpus,
        topic,
        doc_id,
        CASE
            WHEN max(subnarratives) = 1 THEN CAST(max(at_or_below) AS DECIMAL(38, 9))
            ELSE CAST({{ best_facet_weight }} AS DECIMAL(18, 9)) * max(CASE WHEN position = 1 THEN at_or_below END)
                + CAST({{ second_facet_weight }} AS DECIMAL(18, 9)) * max(CASE WHEN position = 2 THEN at_or_below END)
        END AS facet_key
    FROM facets
    GROUP BY corpus, topic, doc_id
),

support AS (
    SELECT corpus, topic, doc_id, count(DISTINCT unit) AS supported, count(*) AS strong_passages
    FROM models.passage_support
    WHERE strong AND kept IS NOT NULL
    GROUP BY corpus, topic, doc_id
),

keyed AS (
    SELECT
        c.corpus,
        c.topic,
        c.doc_row,
        c.doc_id,
        c.k,
        c.best_source_rank,
        n.percentile AS narrative_percentile,
        n.at_or_below AS narrative_key,
        CAST(f.facet_key AS DOUBLE) / n.candidates AS facet,
        CAST({{ narrative_weight }} AS DECIMAL(18, 9)) * n.at_or_below
            + CAST({{ facet_weight }} AS DECIMAL(18, 9)) * coalesce(f.facet_key, n.at_or_below) AS combo_key,
        coalesce(s.supported, 0) AS supported,
        coalesce(s.strong_passages, 0) AS strong_passages
    FROM models.lane_candidates AS c
    JOIN narrative AS n ON n.corpus = c.corpus AND n.topic = c.topic AND n.doc_id = c.doc_id
    LEFT JOIN facet AS f ON f.corpus = c.corpus AND f.topic = c.topic AND f.doc_id = c.doc_id
    LEFT JOIN support AS s ON s.corpus = c.corpus AND s.topic = c.topic AND s.doc_id = c.doc_id
),

ranked AS (
    SELECT
        'combo' AS method,
        k.*,
        row_number() OVER (PARTITION BY k.corpus, k.topic ORDER BY k.combo_key DESC, k.best_source_rank, k.doc_id) AS rank
    FROM keyed AS k
    UNION ALL
    SELECT
        'breadth' AS method,
        k.*,
        row_number() OVER (
            PARTITION BY k.corpus, k.topic
            ORDER BY k.supported DESC, k.strong_passages DESC, k.combo_key DESC, k.best_source_rank, k.doc_id
        ) AS rank
    FROM keyed AS k
    UNION ALL
    SELECT
        'narrative' AS method,
        k.*,
        row_number() OVER (
            PARTITION BY k.corpus, k.topic ORDER BY k.narrative_key DESC, k.best_source_rank, k.doc_id
        ) AS rank
    FROM keyed AS k
)

SELECT
    method,
    corpus,
    topic,
    rank,
    doc_row,
    doc_id,
    CAST(k + 1 - rank AS DOUBLE) AS score,
    CAST(combo_key AS DOUBLE) / k AS combo,
    combo_key,
    narrative_percentile,
    facet,
    supported,
    strong_passages,
    best_source_rank,
    k
FROM ranked
