-- name: judgments
-- version: 2
-- stage: evaluate
-- holds: labels
-- grain: study, query_key, doc_key
-- audits:
-- parameters: study = "eval", judgments = "qrels_judgments", part_judgments = []
-- materialized: view
-- description: The relevance judgments a study evaluates with, in one shape: (study, query_key,
--   query_id, query_order, doc_key, grade). query_key and doc_key join the rankings shape; query_id
--   is how the query is shown (its qid, topic or task id); query_order is its position in the study's
--   own order (row order of its file), which resampling plans index; grade is the judgment (a
--   negative grade means pooled but not judged, as in trec_eval). The protocol names the source
--   (parameter `judgments`): qrels_judgments (TREC qrels, the default), corpus_qrels_judgments,
--   class_judgments, topic_judgments or evidence_pool_grades. The parts of a study (rankings'
--   `model@part` sources) name theirs in `part_judgments`, each `model@part`; query_id must be unique
--   across the parts of a study (the measures join on system and query).
SELECT {{ study | literal }} AS study, query_key, query_id, query_order, doc_key, grade
FROM models.{{ judgments | identifier }}
{%- for source in part_judgments %}

UNION ALL

SELECT {{ source | source_study(study) | literal }}, query_key, query_id, query_order, doc_key, grade
FROM models.{{ source | source_model }}
{%- endfor %}
