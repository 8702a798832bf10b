-- name: judgments
-- version: 1
-- stage: evaluate
-- grain: study, query_key, doc_key
-- audits:
-- parameters: study = "eval", judgments = "qrels_judgments"
-- materialized: view
-- description: The relevance judgments a study evaluates with, in one shape: (study, query_key,
--   query_id, query_order, doc_key, grade). query_key and doc_key join the rankings shape; query_id
--   is how the query is shown (its qid, topic or task id); query_order is its position in the study's
--   own order (row order of its file), which resampling plans index; grade is the judgment (a
--   negative grade means pooled but not judged, as in trec_eval). The protocol names the source
--   (parameter `judgments`): qrels_judgments (TREC qrels, the default), corpus_qrels_judgments,
--   class_judgments, topic_judgments or evidence_pool_grades.
SELECT {{ study | literal }} AS study, query_key, query_id, query_order, doc_key, grade
FROM models.{{ judgments | identifier }}
