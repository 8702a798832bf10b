{#- Reshaping the long form for the wide tables readers like. -#}

{#- One row per system and query of query_measures, one column per measure: `columns` maps a column
    name to the measure label whose value it holds (NULL where the measure was not computed). -#}
{% macro measures_by_query(columns) -%}
SELECT
    system,
    query,
    {%- for column, measure in columns.items() %}
    max(CASE WHEN measure = {{ measure | literal }} THEN value END) AS {{ column | identifier }}
    {{- "," if not loop.last }}
    {%- endfor %}
FROM models.query_measures
GROUP BY system, query
{%- endmacro %}

{#- No rows, with the given columns ({name: SQL type}): what a model renders when its parameters ask
    for nothing (e.g. a bootstrap without contrasts), so that every model parses with any parameters. -#}
{% macro no_rows(columns) -%}
SELECT
    {%- for name, type in columns.items() %}
    CAST(NULL AS {{ type }}) AS {{ name | identifier }}{{ "," if not loop.last }}
    {%- endfor %}
WHERE false
{%- endmacro %}
