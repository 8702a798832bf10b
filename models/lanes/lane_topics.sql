-- name: lane_topics
-- version: 2
-- stage: prepare
-- grain: corpus, topic
-- audits: not_null(corpus, topic, topic_row, subnarratives, lanes, lane_documents, admitted, k, fallback); unique_grain; accepted_range(k, 0, )
-- parameters: corpus = "banking77"
-- description: Per topic, the receipt of its candidate core: subnarratives, lanes with documents, lane
--   documents and admissions summed over lanes, k_t (0 for a topic no lane reached) and whether the
--   narrative-argmax fallback was used.
WITH topics AS (
    SELECT corpus, topic, min(topic_row) AS topic_row, count(*) - 1 AS subnarratives
    FROM models.lane_units
    WHERE corpus = {{ corpus | literal }}
    GROUP BY corpus, topic
),

lanes AS (
    SELECT corpus, topic, count(*) AS lanes, sum(documents) AS lane_documents, sum(admitted) AS admitted
    FROM models.lane_statistics
    GROUP BY corpus, topic
),

candidates AS (
    SELECT corpus, topic, count(*) AS k, max(CASE WHEN fallback THEN 1 ELSE 0 END) AS fallback
    FROM models.lane_candidates
    GROUP BY corpus, topic
)

SELECT
    t.corpus,
    t.topic,
    t.topic_row,
    t.subnarratives,
    coalesce(l.lanes, 0) AS lanes,
    coalesce(l.lane_documents, 0) AS lane_documents,
    coalesce(l.admitted, 0) AS admitted,
    coalesce(c.k, 0) AS k,
    coalesce(c.fallback, 0) = 1 AS fallback
FROM topics AS t
LEFT JOIN lanes AS l ON l.corpus = t.corpus AND l.topic = t.topic
LEFT JOIN candidates AS c ON c.corpus = t.corpus AND c.topic = t.topic
