-- name: cluster_bootstrap
-- version: 1
-- stage: evaluate
-- grain: study, system, subset, measure
-- audits: not_null(study, system, subset, measure, value, ci_low, ci_high, replicates, queries, clusters, plan_units); unique_grain; accepted_range(plan_excess, 0, 0)
-- parameters: cluster_plan = "", cluster_measures = [], query_clusters = "group_clusters", interval_level = 0.95
-- description: A percentile bootstrap over clusters of queries, for queries that are not independent
--   (seed 004 E3: the four paraphrases of a group): for each system, query subset and measure of
--   `cluster_measures`, value is the mean of the per-query values (query_measures) and the interval the
--   percentile interval (percentile_interval, `interval_level`) of the replicate means of the stored,
--   seeded plan `cluster_plan` (raw.resample_plans), which draws cluster positions with replacement:
--   replicate r's mean is over every query of every drawn cluster, a cluster drawn twice counted twice
--   (means in exact 1e-17 units, the statistics macros). The clusters come from the model
--   `query_clusters` names (columns query, cluster, cluster_order: the position the plan draws); a
--   subset keeps its own queries of each drawn cluster. plan_units (draws per replicate) must equal the
--   clusters there are (plan_excess 0).
{% if cluster_plan and cluster_measures -%}
WITH members AS (
    SELECT q.study, q.system, s.subset, q.measure, c.cluster_order AS item, {{ units('q.value') }} AS units
    FROM models.query_measures AS q
    JOIN models.query_subsets AS s ON s.study = q.study AND s.query = q.query
    JOIN models.{{ query_clusters | identifier }} AS c ON c.query = q.query
    WHERE q.measure IN {{ cluster_measures | literal }}
),

replicates AS (
    SELECT m.study, m.system, m.subset, m.measure, p.replicate, {{ mean_of_units('m.units') }} AS mean
    FROM models.resample_plans AS p
    JOIN members AS m ON m.item = p.item
    WHERE p.plan = {{ cluster_plan }}
    GROUP BY m.study, m.system, m.subset, m.measure, p.replicate
),

intervals AS (
    SELECT
        study,
        system,
        subset,
        measure,
        {{ percentile_interval("mean", interval_level) | indent(8) }},
        count(*) AS replicates
    FROM replicates
    GROUP BY study, system, subset, measure
),

observed AS (
    SELECT
        study,
        system,
        subset,
        measure,
        {{ mean_of_units('units') }} AS value,
        count(*) AS queries,
        count(DISTINCT item) AS clusters
    FROM members
    GROUP BY study, system, subset, measure
),

plan_size AS (
    SELECT
        (SELECT max(draw) + 1 FROM models.resample_plans WHERE plan = {{ cluster_plan }}) AS plan_units,
        (SELECT count(DISTINCT cluster_order) FROM models.{{ query_clusters | identifier }}) AS clusters
)

SELECT
    o.study, o.system, o.subset, o.measure, o.value, i.ci_low, i.ci_high, i.replicates, o.queries, o.clusters,
    z.plan_units, z.plan_units - z.clusters AS plan_excess
FROM observed AS o
JOIN intervals AS i ON i.study = o.study AND i.system = o.system AND i.subset = o.subset AND i.measure = o.measure
CROSS JOIN plan_size AS z
{%- else -%}
{{ no_rows({"study": "VARCHAR", "system": "VARCHAR", "subset": "VARCHAR", "measure": "VARCHAR", "value": "DOUBLE",
            "ci_low": "DOUBLE", "ci_high": "DOUBLE", "replicates": "BIGINT", "queries": "BIGINT", "clusters": "BIGINT",
            "plan_units": "INTEGER", "plan_excess": "BIGINT"}) }}
{%- endif %}
