-- name: query_intents
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query
-- audits: not_null(query, query_group); unique_grain
-- parameters: corpus = "banking77"
-- description: Each query's class (for BANKING77 its intent) as its group, for macro averages over
--   intents (group_means).
SELECT qid AS query, class AS query_group
FROM models.query_classes
WHERE corpus = {{ corpus | literal }}
