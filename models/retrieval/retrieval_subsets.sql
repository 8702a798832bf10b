-- name: retrieval_subsets
-- version: 1
-- stage: prepare
-- grain: subset, query_key
-- audits: not_null(subset, query_key); unique_grain
-- parameters: corpus = "banking77"
-- description: The retrieval study's own query subset (seed 004: report every measure also without the
--   test queries whose lowercased, whitespace-normalised text occurs in training):
--   without_training_duplicates, by query row.
SELECT 'without_training_duplicates' AS subset, query_row AS query_key
FROM models.query_duplicates
WHERE corpus = {{ corpus | literal }} AND NOT in_documents
