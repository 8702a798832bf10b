-- name: run_ranking
-- version: 1
-- stage: prepare
-- grain: run_id, qid, rank
-- audits: not_null(run_id, qid, docno, rank); unique_grain; accepted_range(rank, 1, ); at_least_one_row
-- parameters: depth = 0
-- description: Every run's documents per query in trec_eval's order: score descending, then docno
--   descending (byte order); the file's rank column is ignored. Scores are compared as 32-bit
--   floats because trec_eval stores them so: scores equal in float32 tie. With depth > 0 only the
--   first `depth` documents are kept (trec_eval -M).
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
