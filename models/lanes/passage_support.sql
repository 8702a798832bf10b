-- name: passage_support
-- version: 2
-- stage: prepare
-- grain: corpus, topic, unit, doc_id, chunk
-- audits: not_null(corpus, topic, unit, doc_id, chunk, score, median, mad, threshold, strong, position); unique_grain; accepted_range(kept, 1, 3)
-- parameters: corpus = "banking77", mad_multiplier = 2.5, mad_scale = 1.4826
-- description: Supporting passages for the evidence-breadth ordering (seed 002, run 2), per topic,
--   subnarrative unit, candidate and chunk. strong: the same robust raw-score rule as admission (robust_thresholds), over all
--   the topic's candidate passages for that subnarrative (score >= m + 2.5 * 1.4826 * MAD when MAD > 0,
--   score > m when MAD = 0). Overlap suppression within each document and subnarrative: greedily take
--   the best passage (score descending, then chunk index), then the best that overlaps no taken one, at
--   most three (kept = 1, 2, 3; NULL: suppressed or beyond three). Chunks overlap when their character
--   ranges [start, start + length) intersect; the three picks are written out, so three is fixed.
WITH passages AS (
    SELECT p.corpus, p.topic, p.unit, p.doc_id, p.chunk, p.score, ch.start, ch.length
    FROM models.passage_scores AS p
    JOIN models.lane_candidates AS c ON c.corpus = p.corpus AND c.topic = p.topic AND c.doc_id = p.doc_id
    JOIN models.lane_chunks AS ch ON ch.corpus = p.corpus AND ch.doc_id = p.doc_id AND ch.chunk = p.chunk
    WHERE p.corpus = {{ corpus | literal }} AND p.unit <> 'narrative'
),

thresholds AS (
    {{ robust_thresholds('passages', ['corpus', 'topic', 'unit'], 'score', mad_multiplier, mad_scale) | indent(4) }}
),

judged AS (
    SELECT
        p.*,
        d.median,
        d.mad,
        d.threshold,
        row_number() OVER (PARTITION BY p.corpus, p.topic, p.unit, p.doc_id ORDER BY {{ seed_order('p.score', 'p.chunk') }}) AS position
    FROM passages AS p
    JOIN thresholds AS d ON d.corpus = p.corpus AND d.topic = p.topic AND d.unit = p.unit
),

first_pick AS (
    SELECT corpus, topic, unit, doc_id, chunk, start, length
    FROM judged
    WHERE position = 1
),

second_choices AS (
    SELECT
        j.corpus,
        j.topic,
        j.unit,
        j.doc_id,
        j.chunk,
        j.start,
        j.length,
        row_number() OVER (PARTITION BY j.corpus, j.topic, j.unit, j.doc_id ORDER BY j.position) AS choice
    FROM judged AS j
    JOIN first_pick AS f ON f.corpus = j.corpus AND f.topic = j.topic AND f.unit = j.unit AND f.doc_id = j.doc_id
    WHERE j.chunk <> f.chunk AND NOT (j.start < f.start + f.length AND f.start < j.start + j.length)
),

second_pick AS (
    SELECT corpus, topic, unit, doc_id, chunk, start, length
    FROM second_choices
    WHERE choice = 1
),

third_choices AS (
    SELECT
        j.corpus,
        j.topic,
        j.unit,
        j.doc_id,
        j.chunk,
        row_number() OVER (PARTITION BY j.corpus, j.topic, j.unit, j.doc_id ORDER BY j.position) AS choice
    FROM judged AS j
    JOIN first_pick AS f ON f.corpus = j.corpus AND f.topic = j.topic AND f.unit = j.unit AND f.doc_id = j.doc_id
    JOIN second_pick AS s ON s.corpus = j.corpus AND s.topic = j.topic AND s.unit = j.unit AND s.doc_id = j.doc_id
    WHERE j.chunk <> f.chunk AND j.chunk <> s.chunk
        AND NOT (j.start < f.start + f.length AND f.start < j.start + j.length)
        AND NOT (j.start < s.start + s.length AND s.start < j.start + j.length)
),

kept AS (
    SELECT corpus, topic, unit, doc_id, chunk, 1 AS kept FROM first_pick
    UNION ALL
    SELECT corpus, topic, unit, doc_id, chunk, 2 AS kept FROM second_pick
    UNION ALL
    SELECT corpus, topic, unit, doc_id, chunk, 3 AS kept FROM third_choices WHERE choice = 1
)

SELECT
    j.corpus,
    j.topic,
    j.unit,
    j.doc_id,
    j.chunk,
    j.score,
    j.median,
    j.mad,
    j.threshold,
    {{ robust_admits('j.score', 'j') }} AS strong,
    j.position,
    k.kept
FROM judged AS j
LEFT JOIN kept AS k
    ON k.corpus = j.corpus AND k.topic = j.topic AND k.unit = j.unit AND k.doc_id = j.doc_id AND k.chunk = j.chunk
