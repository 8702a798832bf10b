-- name: judged_ranking
-- version: 1
-- stage: evaluate
-- grain: run_id, qid, rank
-- audits: not_null(run_id, qid, docno, rank, relevant); unique_grain
-- parameters: relevance_level = 1, judged_only = false
-- description: The ranked documents of the queries that have qrels, with their grade: rel is NULL
--   for a document outside the qrels and negative for one pooled but not judged; relevant means
--   rel >= relevance_level (-l). With judged_only (-J) every document without a grade >= 0 is
--   dropped and the rest re-ranked in the same order.
WITH graded AS (
    SELECT r.run_id, r.qid, r.docno, r.rank AS run_rank, q.rel
    FROM models.run_ranking AS r
    JOIN (SELECT DISTINCT qid FROM gate.qrels) AS topics ON topics.qid = r.qid
    LEFT JOIN gate.qrels AS q ON q.qid = r.qid AND q.docno = r.docno
    {% if judged_only -%}
    WHERE q.rel >= 0
    {%- endif %}
)

SELECT
    run_id,
    qid,
    docno,
    {% if judged_only -%}
    row_number() OVER (PARTITION BY run_id, qid ORDER BY run_rank) AS rank,
    {%- else -%}
    run_rank AS rank,
    {%- endif %}
    rel,
    coalesce(rel >= {{ relevance_level }}, false) AS relevant
FROM graded
