-- name: lane_scores
-- version: 2
-- stage: prepare
-- grain: corpus, topic, lane, doc_id
-- audits: not_null(corpus, topic, lane, unit_row, doc_row, doc_id, score, source_rank); unique_grain; accepted_range(source_rank, 1, )
-- parameters: corpus = "banking77", lane_source = "bm25", lane_set = "lanes"
-- description: The lanes a study admits from (seed 002: D_u, A_u(d) and the source rank per lane u of a
--   topic): lane_source "bm25" takes the BM25 lanes of models.bm25_lanes; "runs" takes the lane runs a
--   user loaded (lane_runs, lane set lane_set). Every lane must be a unit of its topic (unit_row: 0
--   the narrative, 1.. the subnarratives) and every document one of the corpus (doc_row): the not_null
--   audit names the rows that are not.
{% if lane_source == "bm25" %}
WITH lanes AS (
    SELECT corpus, topic, lane, doc_id, score, source_rank
    FROM models.bm25_lanes
)
{% elif lane_source == "runs" %}
WITH lanes AS (
    SELECT {{ corpus | literal }} AS corpus, topic, lane, docno AS doc_id, score, source_rank
    FROM models.lane_runs
    WHERE lane_set = {{ lane_set | literal }}
)
{% else %}
lane_source must be "bm25" or "runs"
{% endif %}

SELECT l.corpus, l.topic, l.lane, u.unit_row, d.doc_row, l.doc_id, l.score, l.source_rank
FROM lanes AS l
LEFT JOIN models.lane_units AS u ON u.corpus = l.corpus AND u.topic = l.topic AND u.unit = l.lane
LEFT JOIN models.documents AS d ON d.corpus = l.corpus AND d.doc_id = l.doc_id
