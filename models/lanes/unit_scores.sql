-- name: unit_scores
-- version: 3
-- stage: prepare
-- grain: corpus, topic, unit, doc_id
-- audits: not_null(corpus, topic, unit, unit_row, doc_row, doc_id, chunks, score, at_or_below, candidates, percentile); unique_grain; accepted_range(unscored_chunks, 0, 0); accepted_range(percentile, 0, 1)
-- parameters: corpus = "banking77"
-- description: The candidate x semantic-unit matrix (seed 002, "Shared rescoring matrix"): per topic,
--   candidate d and unit u (the narrative and each subnarrative), the document's unit score = the
--   highest score of its chunks against u (MaxP: a document is as relevant as its best passage), and
--   its percentile among the topic's k_t candidates for u = the share of them whose unit score is at
--   most d's (cume_dist: ties share the top of their block; 1 for the best, 1/k_t at least), kept as
--   the exact fraction at_or_below / candidates too, for the orderings' exact keys. The audit
--   on unscored_chunks requires every chunk of every candidate to be scored against every unit.
WITH best_passages AS (
    SELECT corpus, topic, unit, doc_id, max(score) AS score, count(*) AS passages
    FROM models.passage_scores
    WHERE corpus = {{ corpus | literal }}
    GROUP BY corpus, topic, unit, doc_id
),

chunked AS (
    SELECT DISTINCT corpus, doc_id, chunks
    FROM models.lane_chunks
),

expected AS (
    SELECT c.corpus, c.topic, u.unit, u.unit_row, c.doc_row, c.doc_id, k.chunks
    FROM models.lane_candidates AS c
    JOIN models.lane_units AS u ON u.corpus = c.corpus AND u.topic = c.topic
    JOIN chunked AS k ON k.corpus = c.corpus AND k.doc_id = c.doc_id
),

counted AS (
    SELECT
        e.corpus,
        e.topic,
        e.unit,
        e.unit_row,
        e.doc_row,
        e.doc_id,
        e.chunks,
        e.chunks - coalesce(p.passages, 0) AS unscored_chunks,
        p.score,
        count(*) OVER (PARTITION BY e.corpus, e.topic, e.unit ORDER BY p.score) AS at_or_below,
        count(*) OVER (PARTITION BY e.corpus, e.topic, e.unit) AS candidates
    FROM expected AS e
    LEFT JOIN best_passages AS p
        ON p.corpus = e.corpus AND p.topic = e.topic AND p.unit = e.unit AND p.doc_id = e.doc_id
)

SELECT
    corpus, topic, unit, unit_row, doc_row, doc_id, chunks, unscored_chunks, score, at_or_below, candidates,
    at_or_below / candidates AS percentile
FROM counted
