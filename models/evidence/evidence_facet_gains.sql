-- name: evidence_facet_gains
-- version: 1
-- stage: prepare
-- grain: bundle, task_id, facet, doc_id
-- audits: not_null(bundle, task_id, facet, doc_id, positive, pool_max, gain, facets); unique_grain; accepted_range(gain, 0, 1)
-- description: The normalised facet gain g(f, d) of seed 000 ("normalizer"): the positive cosine
--   max(0, f.d) divided by its maximum over the complete pool of the task, never over a selection;
--   a facet whose positive cosines are all zero keeps gain 0. `facets` is m + 1, the task's number of
--   facets (its question and m requirements), each weighted 1 / (m + 1) in the objective.
WITH positives AS (
    SELECT bundle, task_id, facet, doc_id, greatest(cosine, 0) AS positive
    FROM models.evidence_facet_cosines
),

scaled AS (
    SELECT
        bundle,
        task_id,
        facet,
        doc_id,
        positive,
        max(positive) OVER (PARTITION BY bundle, task_id, facet) AS pool_max
    FROM positives
),

facet_counts AS (
    SELECT bundle, task_id, count(DISTINCT facet) AS facets
    FROM positives
    GROUP BY bundle, task_id
)

SELECT
    s.bundle,
    s.task_id,
    s.facet,
    s.doc_id,
    s.positive,
    s.pool_max,
    CASE WHEN s.pool_max = 0 THEN 0.0 ELSE s.positive / s.pool_max END AS gain,
    c.facets
FROM scaled AS s
JOIN facet_counts AS c ON c.bundle = s.bundle AND c.task_id = s.task_id
