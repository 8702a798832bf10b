-- name: paired_differences
-- version: 2
-- stage: evaluate
-- grain: study, subset, contrast, measure, query
-- audits: not_null(study, subset, system_a, system_b, contrast, measure, query, study_position, subset_position, study_queries, subset_queries); unique_grain
-- parameters: contrasts = [], contrast_measures = []
-- parity: within(difference 1e-12, units 100000): d = value(a) - value(b) of two doubles that the engines
--   give within 1e-12 relative (a sum's order) may differ by 1e-16 when they are equal (0 on one, 2^-53
--   on the other), so d within 1e-12 absolute (measures of at most 1), and its whole 1e-17 units within 1e5
-- description: The per-query paired differences every paired test and interval reads (paired_bootstrap,
--   paired_t_tests, paired_randomization_tests): for each contrast [a, b] of `contrasts` and each
--   measure of `contrast_measures`, on each query of each subset, d = value(a) - value(b) from
--   query_measures, and d in whole 1e-17 units (the statistics macro `units`), whose sums are exact.
--   d is NULL where either value is missing or undefined (every test leaves it out); a query appears
--   if the study has any per-query value for it. study_position is the query's 0-based position in the
--   study's query order among all judged queries (what a plan over the study's queries indexes),
--   subset_position its position within the subset; study_queries and subset_queries count them.
--   A contrast is taken in each study (or part of a study) that measures both of its systems.
{%- set columns = [] %}
{%- for a, b in contrasts %}{% for measure in contrast_measures %}
{%- set _ = columns.append((a, b, measure)) %}
{%- endfor %}{% endfor %}
{% if columns -%}
WITH positions AS (
    SELECT
        study,
        subset,
        query,
        row_number() OVER (PARTITION BY study, subset ORDER BY query_order) - 1 AS subset_position,
        count(*) OVER (PARTITION BY study, subset) AS subset_queries
    FROM models.query_subsets
),

study_positions AS (
    SELECT study, query, subset_position AS study_position, subset_queries AS study_queries
    FROM positions
    WHERE subset = 'all'
),

differences AS (
    {%- for a, b, measure in columns %}
    SELECT
        study,
        {{ a | literal }} AS system_a,
        {{ b | literal }} AS system_b,
        {{ measure | literal }} AS measure,
        query,
        max(CASE WHEN system = {{ a | literal }} AND measure = {{ measure | literal }} THEN value END)
            - max(CASE WHEN system = {{ b | literal }} AND measure = {{ measure | literal }} THEN value END)
            AS difference
    FROM models.query_measures
    WHERE study IN (
        SELECT study FROM models.query_measures WHERE system = {{ a | literal }}
        INTERSECT
        SELECT study FROM models.query_measures WHERE system = {{ b | literal }}
    )
    GROUP BY study, query
    {{ "UNION ALL" if not loop.last }}
    {%- endfor %}
)

SELECT
    p.study,
    p.subset,
    d.system_a,
    d.system_b,
    d.system_a || ' - ' || d.system_b AS contrast,
    d.measure,
    p.query,
    s.study_position,
    p.subset_position,
    s.study_queries,
    p.subset_queries,
    d.difference,
    {{ units("d.difference") }} AS units
FROM positions AS p
JOIN study_positions AS s ON s.study = p.study AND s.query = p.query
JOIN differences AS d ON d.study = p.study AND d.query = p.query
{%- else -%}
{{ no_rows({"study": "VARCHAR", "subset": "VARCHAR", "system_a": "VARCHAR", "system_b": "VARCHAR", "contrast": "VARCHAR",
            "measure": "VARCHAR", "query": "VARCHAR", "study_position": "BIGINT", "subset_position": "BIGINT",
            "study_queries": "BIGINT", "subset_queries": "BIGINT", "difference": "DOUBLE", "units": "BIGINT"}) }}
{%- endif %}
