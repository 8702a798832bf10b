-- name: judged_ranking
-- version: 4
-- stage: evaluate
-- holds: labels
-- grain: study, system, query, rank
-- audits: not_null(study, system, query, rank, grade, relevant); accepted_range(rank, 1, )
-- parameters: relevance_level = 1, judged_only = false
-- description: The ranked documents that are judged, with their rank and grade: all that the measures
--   need besides the number retrieved (retrieved_counts), a small fraction of a large run. grade < 0
--   means pooled but not judged; relevant means grade >= relevance_level (-l). With judged_only (-J)
--   documents without a grade >= 0 are dropped and ranks count judged documents only. The grain is
--   unique by construction (a subset of the rankings), so it is not audited.
WITH graded AS (
    SELECT r.study, r.system, j.query_id AS query, r.rank AS ranked_at, j.grade
    FROM models.rankings AS r
    JOIN models.judgments AS j ON j.study = r.study AND j.query_key = r.query_key AND j.doc_key = r.doc_key
    {% if judged_only -%}
    WHERE j.grade >= 0
    {%- endif %}
)

SELECT
    study,
    system,
    query,
    {% if judged_only -%}
    row_number() OVER (PARTITION BY study, system, query ORDER BY ranked_at) AS rank,
    {%- else -%}
    ranked_at AS rank,
    {%- endif %}
    grade,
    grade >= {{ relevance_level }} AS relevant
FROM graded
