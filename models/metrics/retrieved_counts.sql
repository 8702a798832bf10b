-- name: retrieved_counts
-- version: 4
-- stage: evaluate
-- grain: study, system, query
-- audits: not_null(study, system, query, num_ret); unique_grain; accepted_range(num_ret, 1, )
-- parameters: judged_only = false, measures = ["AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec", "Bpref", "Success@10", "NumRet", "NumRel", "NumRelRet", "NumQ"]
-- description: Documents ranked per system and query (trec_eval num_ret): every ranked document, or
--   with judged_only (-J) only those with a grade >= 0 (judged_ranking keeps no others then). Counted
--   only when NumRet or Judged (which divides by it when fewer than k were retrieved) is requested:
--   it reads every ranked document, where the measures read only the judged ones.
{% set counted = "NumRet" in measures | measure_families or "Judged" in measures | measure_families -%}
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
