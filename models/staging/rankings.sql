-- name: rankings
-- version: 1
-- stage: evaluate
-- grain: study, system, query_key, rank
-- audits:
-- parameters: study = "eval", rankings = ["run_ranking"]
-- materialized: view
-- description: Every ranked list a study evaluates, in one shape: (study, system, query_key, doc_key,
--   rank, score), rank 1 the best. The protocol names its sources (parameter `rankings`), each a model
--   with the columns system, query_key, doc_key, rank and score: run_ranking (loaded TREC runs, the
--   default) or a study's own (retrieval_rankings, fusion_rankings, lane_rankings, evidence_rankings).
--   The keys are the study's own (a qid, a row number, a topic), of one type within a study; every
--   measure model (models/metrics/) reads this shape and judgments. An evaluate model, since a study
--   may evaluate a ranking that reads labels (the evidence study's oracle).
{% for source in rankings %}
SELECT {{ study | literal }} AS study, system, query_key, doc_key, rank, score
FROM models.{{ source | identifier }}
{{ "UNION ALL" if not loop.last }}
{%- endfor %}
