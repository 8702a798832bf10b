-- name: case_semantic_failures
-- version: 1
-- stage: evaluate
-- grain: case_id, rank
-- audits: not_null(case_id, rank, doc_key, doc_id, intent, unwanted_units); unique_grain
-- description: E4's semantic failures, reported apart from the numerical checks (seed 004): documents
--   in a case's hard-filtered top 10 whose intent is one of the case's unwanted intents although their
--   unwanted feature passed the filter (<= 0.2): the filter was right about the number and the stored
--   feature was wrong about the message.
SELECT r.case_id, r.rank, r.doc_key, u.doc_id, u.intent, s.unwanted_units, r.score
FROM models.case_rankings AS r
JOIN models.case_intent_documents AS u ON u.case_id = r.case_id AND u.doc_row = r.doc_key AND u.role = 'unwanted'
JOIN models.case_scores AS s ON s.system = 'positive' AND s.case_id = r.case_id AND s.doc_row = r.doc_key
WHERE r.system = 'hard-filter' AND r.rank <= 10
