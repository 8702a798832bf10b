-- name: candidate_summary
-- version: 1
-- stage: prepare
-- grain: corpus
-- audits: not_null(corpus, topics, k_distinct, fallback_topics, topics_without_candidates); unique_grain
-- description: The distribution of the candidate set sizes k_t over a corpus's topics (lane_topics,
--   seed 002): topics, the smallest, largest, number of distinct, mean and median k_t, the topics
--   that used the narrative-argmax fallback and those no lane reached.
SELECT
    corpus,
    count(*) AS topics,
    min(k) AS k_min,
    max(k) AS k_max,
    count(DISTINCT k) AS k_distinct,
    avg(k) AS k_mean,
    {{ median('k') }} AS k_median,
    count(*) FILTER (WHERE fallback) AS fallback_topics,
    count(*) FILTER (WHERE k = 0) AS topics_without_candidates
FROM models.lane_topics
GROUP BY corpus
