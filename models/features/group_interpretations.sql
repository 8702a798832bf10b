-- name: group_interpretations
-- version: 1
-- stage: prepare
-- grain: group_id
-- audits: not_null(group_id, phrases, diagnosed, review, unsupported, without_weights); unique_grain
-- description: How the provider's interpretations of E3's phrases fared, per group and over all
--   phrases (group_id 'all', group_row NULL): phrases, those with diagnostics (requirement_flags), those
--   flagged for review or unsupported, and their rates over all phrases, the mean coverage, and the
--   phrases whose interpretation named no feature (scored 0 everywhere). Strict results keep every
--   phrase (seed 004: review rates are reported, nothing is dropped).
WITH weighted AS (
    SELECT DISTINCT corpus, item FROM models.requirement_values
),

phrases AS (
    SELECT
        q.group_id,
        q.group_row,
        f.item IS NOT NULL AS diagnosed,
        coalesce(f.review, false) AS review,
        coalesce(f.unsupported, false) AS unsupported,
        f.coverage,
        w.item IS NULL AS without_weights
    FROM models.group_queries AS q
    LEFT JOIN models.requirement_flags AS f ON f.corpus = q.corpus AND f.item = q.item
    LEFT JOIN weighted AS w ON w.corpus = q.corpus AND w.item = q.item
)

SELECT
    coalesce(group_id, 'all') AS group_id,
    group_row,
    count(*) AS phrases,
    count(*) FILTER (WHERE diagnosed) AS diagnosed,
    count(*) FILTER (WHERE review) AS review,
    count(*) FILTER (WHERE unsupported) AS unsupported,
    count(*) FILTER (WHERE review) / count(*) AS review_rate,
    count(*) FILTER (WHERE unsupported) / count(*) AS unsupported_rate,
    {{ mean('coverage') }} AS mean_coverage,
    count(*) FILTER (WHERE without_weights) AS without_weights
FROM phrases
GROUP BY GROUPING SETS ((group_id, group_row), ())
