-- name: lane_admission
-- version: 1
-- stage: prepare
-- grain: corpus, topic, lane, doc_id
-- audits: not_null(corpus, topic, lane, doc_row, doc_id, score, source_rank, median, mad, threshold, admitted); unique_grain; accepted_range(mad, 0, )
-- parameters: mad_multiplier = 2.5, mad_scale = 1.4826
-- description: Robust per-lane admission (seed 002, "Shared variable-depth candidate core"): per lane
--   u, m_u = median of A_u(d) over the lane's documents and MAD_u = median of |A_u(d) - m_u| (unscaled;
--   medians are quantile_cont(., 0.5), the mean of the two middle values for an even count). A lane
--   admits d when A_u(d) >= m_u + 2.5 * 1.4826 * MAD_u if MAD_u > 0, and when A_u(d) > m_u if MAD_u = 0
--   (threshold is then m_u, excluded). The constants are DOUBLEs multiplied left to right, as Python does.
WITH lanes AS (
    SELECT corpus, topic, lane, doc_row, doc_id, score, source_rank
    FROM models.lane_scores
),

medians AS (
    SELECT corpus, topic, lane, quantile_cont(score, 0.5) AS median, count(*) AS documents
    FROM lanes
    GROUP BY corpus, topic, lane
),

deviations AS (
    SELECT m.corpus, m.topic, m.lane, m.median, m.documents, quantile_cont(abs(l.score - m.median), 0.5) AS mad
    FROM lanes AS l
    JOIN medians AS m ON m.corpus = l.corpus AND m.topic = l.topic AND m.lane = l.lane
    GROUP BY m.corpus, m.topic, m.lane, m.median, m.documents
),

thresholds AS (
    SELECT
        corpus,
        topic,
        lane,
        median,
        mad,
        documents,
        CASE
            WHEN mad > 0 THEN median + CAST({{ mad_multiplier }} AS DOUBLE) * CAST({{ mad_scale }} AS DOUBLE) * mad
            ELSE median
        END AS threshold
    FROM deviations
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
    CASE WHEN t.mad > 0 THEN l.score >= t.threshold ELSE l.score > t.median END AS admitted
FROM lanes AS l
JOIN thresholds AS t ON t.corpus = l.corpus AND t.topic = l.topic AND t.lane = l.lane
