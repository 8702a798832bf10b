-- name: measure_requests
-- version: 3
-- stage: prepare
-- grain: measure
-- audits: not_null(measure, canonical, family, aggregate); unique_grain; at_least_one_row
-- parameters: measures = ["AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec", "Bpref", "Success@10", "NumRet", "NumRel", "NumRelRet", "NumQ"]
-- description: The measures to compute, each as requested (measure: its label, e.g. Top-1) and as the
--   registry knows it (rankhouse/measures.py: canonical `Family@cutoff`, e.g. P@1, split into family
--   and cutoff; rel, the measure's own lowest relevant grade, as in ir_measures' P(rel=2)@10, NULL for
--   the evaluation's relevance_level; and how its per-query values aggregate: mean, sum or
--   geometric). Measure models compute only the rows requested here; an unknown name stops the build
--   with the known ones.
SELECT position, measure, canonical, family, cutoff, rel, aggregate
FROM (VALUES
        {{ measures | measure_values }}
) AS requested (position, measure, canonical, family, cutoff, rel, aggregate)
