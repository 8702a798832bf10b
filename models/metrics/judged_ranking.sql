-- name: judged_ranking
-- version: 2
-- stage: evaluate
-- grain: run_id, qid, rank
-- audits: not_null(run_id, qid, docno, rank, rel, relevant); accepted_range(rank, 1, )
-- parameters: relevance_level = 1, judged_only = false
-- description: The retrieved documents that are in the qrels, with their rank and grade: all that
--   the measures need besides the number retrieved (retrieved_counts), a small fraction of a large
--   run. rel < 0 means pooled but not judged; relevant means rel >= relevance_level (-l). With
--   judged_only (-J) documents without a grade >= 0 are dropped and ranks count judged documents
--   only. The grain is unique by construction (a subset of run_ranking), so it is not audited.
WITH graded AS (
    SELECT r.run_id, r.qid, r.docno, r.rank AS run_rank, q.rel
    FROM models.run_ranking AS r
    JOIN gate.qrels AS q ON q.qid = r.qid AND q.docno = r.docno
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
    rel >= {{ relevance_level }} AS relevant
FROM graded
