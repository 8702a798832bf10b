-- name: rankings
-- version: 2
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
--   may evaluate a ranking that reads labels (the evidence study's oracle). A source written
--   `model@part` belongs to a part of the study, with its own queries and judgments (judgments'
--   `part_judgments`): its rows carry study = '<study>/<part>', and every measure and statistic is
--   computed per study, so per part.
{% for source in rankings %}
SELECT {{ source | source_study(study) | literal }} AS study, system, query_key, doc_key, rank, score
FROM models.{{ source | source_model }}
{{ "UNION ALL" if not loop.last }}
{%- endfor %}
