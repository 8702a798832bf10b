-- name: run_ranking
-- version: 2
-- stage: prepare
-- grain: run_id, qid, rank
-- audits: at_least_one_row
-- parameters: depth = 0
-- materialized: view
-- description: Every run's documents per query in trec_eval's order: score descending, then docno
--   descending (byte order); the file's rank column is ignored. Scores are compared as 32-bit
--   floats because trec_eval stores them so: scores equal in float32 tie. With depth > 0 only the
--   first `depth` documents are kept (trec_eval -M). A view: its one big reader (judged_ranking)
--   keeps only the judged documents, and materialising every ranked document of a large run would
--   cost more than the whole evaluation. Not null and unique by construction (row_number over
--   NOT NULL columns), so only emptiness is audited.
WITH ordered AS (
    SELECT
        run_id,
        qid,
        docno,
        score,
        row_number() OVER (
            PARTITION BY run_id, qid
            ORDER BY CAST(score AS FLOAT) DESC, docno DESC
        ) AS rank
    FROM raw.runs
)
SELECT run_id, qid, docno, score, rank
FROM ordered
{% if depth > 0 -%}
WHERE rank <= {{ depth }}
{%- endif %}
