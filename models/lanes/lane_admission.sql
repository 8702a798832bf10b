-- name: lane_admission
-- version: 2
-- stage: prepare
-- grain: corpus, topic, lane, doc_id
-- audits: not_null(corpus, topic, lane, doc_row, doc_id, score, source_rank, median, mad, threshold, admitted); unique_grain; accepted_range(mad, 0, )
-- parameters: mad_multiplier = 2.5, mad_scale = 1.4826
-- description: Robust per-lane admission (seed 002, "Shared variable-depth candidate core"): per lane
--   u, m_u = median of A_u(d) over the lane's documents and MAD_u = median of |A_u(d) - m_u| (unscaled).
--   A lane admits d when A_u(d) >= m_u + 2.5 * 1.4826 * MAD_u if MAD_u > 0, and when A_u(d) > m_u if
--   MAD_u = 0 (threshold is then m_u, excluded): the robust_thresholds and robust_admits macros.
WITH lanes AS (
    SELECT corpus, topic, lane, doc_row, doc_id, score, source_rank
    FROM models.lane_scores
),

thresholds AS (
    {{ robust_thresholds('lanes', ['corpus', 'topic', 'lane'], 'score', mad_multiplier, mad_scale) | indent(4) }}
)

SELECT
    l.corpus,
    l.topic,
    l.lane,
    l.doc_row,
    l.doc_id,
    l.score,
    l.source_rank,
    t.documents AS lane_documents,
    t.median,
    t.mad,
    t.threshold,
    {{ robust_admits('l.score', 't') }} AS admitted
FROM lanes AS l
JOIN thresholds AS t ON t.corpus = l.corpus AND t.topic = l.topic AND t.lane = l.lane
