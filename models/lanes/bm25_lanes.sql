-- name: bm25_lanes
-- version: 2
-- stage: prepare
-- grain: corpus, topic, lane, doc_id
-- audits: not_null(corpus, topic, lane, doc_row, doc_id, score, source_rank); unique_grain; accepted_range(source_rank, 1, )
-- parameters: corpus = "banking77", lane_depth = 1000
-- description: The demonstration's query lanes (seed 002): BM25 (models/retrieval, k1 and b of the study)
--   of each semantic unit of a topic, the untouched narrative (lane `narrative`) and each subnarrative
--   (lane `facet:<name>`), which the narratives loader made queries of the corpus (lane_units.qid).
--   A lane is the first lane_depth documents of the unit's full BM25 ranking that share at least one
--   term with it (score > 0: a BM25 index returns no others); its score is the lane's aggregate score
--   A_u(d) and source_rank the rank in that ranking (exact ties by the document's row index).
WITH ranked AS (
    SELECT query_row, doc_row, score, rank
    FROM models.bm25_ranking
    WHERE rank <= {{ lane_depth }} AND score > 0
)

SELECT u.corpus, u.topic, u.unit AS lane, r.doc_row, d.doc_id, r.score, r.rank AS source_rank
FROM ranked AS r
JOIN models.queries AS q ON q.corpus = {{ corpus | literal }} AND q.query_row = r.query_row
JOIN models.lane_units AS u ON u.corpus = q.corpus AND u.qid = q.qid
JOIN models.documents AS d ON d.corpus = q.corpus AND d.doc_row = r.doc_row
