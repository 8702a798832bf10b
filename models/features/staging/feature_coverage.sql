-- name: feature_coverage
-- version: 1
-- stage: prepare
-- grain: corpus, split
-- audits: not_null(corpus, split, expected, complete, missing); unique_grain; at_least_one_row; accepted_range(missing, 0, 0)
-- parameters: corpus = "banking77", schema = "banking77_features", provider = "minilm"
-- description: The extraction store's completeness per split (feature_completeness), as a gate: the
--   audit refuses a split with a missing message, so that an incomplete extraction (a stopped run, a smoke
--   batch) fails the prepare build and never reaches a freeze (seed 004: "no incomplete extraction may
--   produce headline full-test metrics"). Resume it with `rankhouse features extract PROTOCOL`.
SELECT corpus, split, expected, complete, missing, extractors
FROM models.feature_completeness
