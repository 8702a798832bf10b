-- name: passage_scores
-- version: 1
-- stage: prepare
-- grain: corpus, topic, unit, doc_id, chunk
-- audits:
-- materialized: view
-- description: The passage scores of a lanes corpus's candidates (raw.passage_scores), every chunk against
--   every unit.
SELECT corpus, topic, unit, doc_id, chunk, score
FROM raw.passage_scores
