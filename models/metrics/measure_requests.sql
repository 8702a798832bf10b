-- name: measure_requests
-- version: 4
-- stage: prepare
-- grain: measure
-- audits: not_null(measure, canonical, family, aggregate); unique_grain; at_least_one_row
-- parameters: measures = ["AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec", "Bpref", "Success@10", "NumRet", "NumRel", "NumRelRet", "NumQ"]
-- description: The measures to compute, each as requested (measure: its label, e.g. Top-1) and as the
--   registry knows it (rankhouse/measures.py: canonical `Family@cutoff`, e.g. P@1, split into family
--   and cutoff; rel, the measure's own lowest relevant grade, as in ir_measures' P(rel=2)@10, NULL for
--   the evaluation's relevance_level; how its per-query values aggregate: mean, sum, geometric, or text
--   for a string (relstring); and parameters, its other parameters as `name=value` items (RBP's p,
--   SetF's beta, utility's weights a to d, 11pt_avg's levels, a gain per grade), which
--   measure_parameters gives one row each, NULL for none). Measure models compute only the rows
--   requested here; an unknown name stops the build with the known ones.
SELECT position, measure, canonical, family, cutoff, rel, aggregate, parameters
FROM (VALUES
        {{ measures | measure_values }}
) AS requested (position, measure, canonical, family, cutoff, rel, aggregate, parameters)
