-- name: retrieved_counts
-- version: 5
-- stage: evaluate
-- grain: study, system, query
-- audits: not_null(study, system, query, num_ret); unique_grain; accepted_range(num_ret, 1, )
-- parameters: judged_only = false, measures = ["AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec", "Bpref", "Success@10", "NumRet", "NumRel", "NumRelRet", "NumQ"]
-- description: Documents ranked per system and query (trec_eval num_ret): every ranked document, or
--   with judged_only (-J) only those with a grade >= 0 (judged_ranking keeps no others then). Counted
--   only when a measure that reads it is requested (NumRet; Judged and unj, which divide by it when
--   fewer than k were retrieved; the set measures and utility; Rndcg; rbp_resid): it reads every
--   ranked document, where the other measures read only the judged ones.
{% set reading = ["NumRet", "Judged", "unj", "SetP", "SetR", "SetAP", "SetF", "utility", "Rndcg", "rbp_resid"] -%}
{% set counted = measures | measure_families | select("in", reading) | list | length > 0 -%}
{% if counted and not judged_only -%}
SELECT r.study, r.system, j.query_id AS query, count(*) AS num_ret
FROM models.rankings AS r
JOIN (SELECT DISTINCT study, query_key, query_id FROM models.judgments) AS j
    ON j.study = r.study AND j.query_key = r.query_key
GROUP BY r.study, r.system, j.query_id
{%- elif counted -%}
SELECT study, system, query, count(*) AS num_ret
FROM models.judged_ranking
GROUP BY study, system, query
{%- else -%}
SELECT study, system, query, count(*) AS num_ret
FROM models.judged_ranking
WHERE false
GROUP BY study, system, query
{%- endif %}
