-- name: run_ranking
-- version: 4
-- stage: prepare
-- grain: system, query_key, rank
-- audits: at_least_one_row
-- parameters: depth = 0, score_precision = "double"
-- materialized: view
-- description: Every loaded TREC run's documents per query in trec_eval's order (the trec_order
--   macro: score descending, then docno descending), in the rankings shape: system = run id, query_key
--   = qid, doc_key = docno; the file's rank column is ignored. score_precision says how scores compare:
--   "double" as trec_eval 10.0 does (the default), "float" as 32-bit floats, as trec_eval 9 and
--   pytrec_eval do (scores equal in float32 tie, and the docno decides). With depth > 0
--   only the first `depth` documents are kept (trec_eval -M). A view: its one big reader
--   (judged_ranking) keeps only the judged documents, and materialising every ranked document of a
--   large run would cost more than the whole evaluation. Not null and unique by construction
--   (row_number over NOT NULL columns), so only emptiness is audited.
WITH ordered AS (
    SELECT
        run_id,
        qid,
        docno,
        score,
        row_number() OVER (PARTITION BY run_id, qid ORDER BY {{ trec_order('score', 'docno', score_precision) }}) AS rank
    FROM models.runs
)

SELECT run_id AS system, qid AS query_key, docno AS doc_key, rank, score
FROM ordered
{% if depth > 0 -%}
WHERE rank <= {{ depth }}
{%- endif %}
