-- name: feature_cosine_scores
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits:
-- materialized: view
-- description: The cosine of the named features (seed 004 E2, method 2, a research comparator) for
--   every (query, document) pair; 0 where either list is all zeros. From feature_dot_scores, whose dot
--   product q.d and squared norms |q|^2, |d|^2 are exact integers in whole thousandths. A query ranks
--   its documents by score_key = (q.d)^2 / |d|^2 (the query's norm is the same for all): one correctly
--   rounded division of two exact integers below 2^53 (feature_schema), so equal cosines (identical or
--   proportional feature lists) tie exactly and the row-index rule decides, and a larger cosine never
--   ranks below a smaller one. Not exact: two different cosines closer than about one part in 2^53
--   get the same key and tie. score = sqrt(score_key / |q|^2) = q.d / (|q| |d|) to within a few units
--   in the last place, and never out of the key's order.
WITH keys AS (
    SELECT
        corpus,
        query_row,
        doc_row,
        query_norm2,
        CASE WHEN score_key = 0 THEN 0.0 ELSE score_key * score_key / doc_norm2 END AS score_key
    FROM models.feature_dot_scores
)

SELECT
    corpus,
    query_row,
    doc_row,
    score_key,
    CASE WHEN score_key = 0 THEN 0.0 ELSE sqrt(score_key / query_norm2) END AS score
FROM keys
