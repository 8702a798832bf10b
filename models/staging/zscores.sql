-- name: zscores
-- version: 1
-- stage: evaluate
-- grain: qid, measure
-- audits:
-- description: A z-score file (trec_eval -Z), read through the gate: per query and measure (named as
--   trec_eval prints it; canonical, as rankhouse names it, NULL for a name that is no measure's) the mean
--   and standard deviation that turn the query's value of the measure into a z-score (query_zscores).
SELECT qid, measure, canonical, mean, stddev, line
FROM gate.zscores
