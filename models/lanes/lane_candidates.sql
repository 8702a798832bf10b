-- name: lane_candidates
-- version: 1
-- stage: prepare
-- grain: corpus, topic, doc_id
-- audits: not_null(corpus, topic, doc_row, doc_id, admitting_lanes, best_source_rank, fallback, k); unique_grain; accepted_range(k, 1, )
-- description: The shared variable-depth candidate core C_t of each topic (seed 002): the union of the
--   documents its lanes admit, k_t = |C_t|, with no cutoff, padding or truncation. A topic whose lanes
--   admit nothing keeps exactly one document, the argmax of its narrative lane (fallback = true): highest
--   A_narrative(d), then the best (lowest) source rank of d over all the topic's lanes, then the
--   document id in UTF-8 byte order (DuckDB's and Spark's default string order). best_source_rank is
--   that lowest source rank, for every candidate; admitting_lanes counts the lanes that admit it.
WITH admitted AS (
    SELECT corpus, topic, doc_id, count(*) AS admitting_lanes
    FROM models.lane_admission
    WHERE admitted
    GROUP BY corpus, topic, doc_id
),

best_ranks AS (
    SELECT corpus, topic, doc_id, min(doc_row) AS doc_row, min(source_rank) AS best_source_rank
    FROM models.lane_admission
    GROUP BY corpus, topic, doc_id
),

empty_topics AS (
    SELECT DISTINCT corpus, topic FROM models.lane_admission
    EXCEPT
    SELECT DISTINCT corpus, topic FROM admitted
),

narrative_argmax AS (
    SELECT
        a.corpus,
        a.topic,
        a.doc_id,
        row_number() OVER (PARTITION BY a.corpus, a.topic ORDER BY {{ seed_order('a.score', 'b.best_source_rank, a.doc_id') }}) AS position
    FROM models.lane_admission AS a
    JOIN empty_topics AS e ON e.corpus = a.corpus AND e.topic = a.topic
    JOIN best_ranks AS b ON b.corpus = a.corpus AND b.topic = a.topic AND b.doc_id = a.doc_id
    WHERE a.lane = 'narrative'
),

chosen AS (
    SELECT corpus, topic, doc_id, admitting_lanes, FALSE AS fallback FROM admitted
    UNION ALL
    SELECT corpus, topic, doc_id, 0 AS admitting_lanes, TRUE AS fallback FROM narrative_argmax WHERE position = 1
)

SELECT
    c.corpus,
    c.topic,
    b.doc_row,
    c.doc_id,
    c.admitting_lanes,
    b.best_source_rank,
    c.fallback,
    count(*) OVER (PARTITION BY c.corpus, c.topic) AS k
FROM chosen AS c
JOIN best_ranks AS b ON b.corpus = c.corpus AND b.topic = c.topic AND b.doc_id = c.doc_id
