-- name: evidence_facet_vectors
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, facet
-- audits:
-- materialized: view
-- parameters: own_question_vectors = false
-- description: Unit vectors of every evidence task's facets (raw.evidence_facet_vectors): 0 the question, k + 1
--   requirement k. With own_question_vectors, a bundle's questions are its own vectors, loaded by
--   evidence.question_vectors under the name `<bundle>:questions` (seed 000 keeps them unchanged) in place of
--   encoded ones.
{% if own_question_vectors -%}
WITH own_questions AS (
    SELECT left(bundle, length(bundle) - length(':questions')) AS bundle, task_id, facet, vector
    FROM raw.evidence_facet_vectors
    WHERE bundle LIKE '%:questions'
)

SELECT f.bundle, f.task_id, f.facet, f.vector
FROM raw.evidence_facet_vectors AS f
WHERE f.bundle NOT LIKE '%:questions'
    AND NOT (f.facet = 0 AND f.bundle IN (SELECT bundle FROM own_questions))
UNION ALL
SELECT bundle, task_id, facet, vector
FROM own_questions
{%- else -%}
SELECT bundle, task_id, facet, vector
FROM raw.evidence_facet_vectors
{%- endif %}
