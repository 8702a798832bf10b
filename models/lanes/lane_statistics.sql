-- name: lane_statistics
-- version: 1
-- stage: prepare
-- grain: corpus, topic, lane
-- audits: not_null(corpus, topic, lane, documents, median, mad, threshold, admitted); unique_grain
-- description: Per lane, what admission saw and did: its documents |D_u|, median, MAD (unscaled), the
--   threshold (m + 2.5 * 1.4826 * MAD, or m itself, excluded, when MAD = 0) and the documents it admits.
SELECT
    corpus,
    topic,
    lane,
    count(*) AS documents,
    min(median) AS median,
    min(mad) AS mad,
    min(threshold) AS threshold,
    count(*) FILTER (WHERE admitted) AS admitted
FROM models.lane_admission
GROUP BY corpus, topic, lane
