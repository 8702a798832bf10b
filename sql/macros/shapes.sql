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

{#- A ranking keyed by row numbers, with the corpus' own ids beside its rows: qid from models.queries and
    docno (the doc_id) from models.documents, matched on the ranking's corpus and the row numbers in its
    columns `query_row` and `doc_row`. Every column of the ranking is kept. -#}
{% macro with_corpus_ids(ranking, query_row, doc_row) -%}
SELECT r.*, q.qid, d.doc_id AS docno
FROM {{ ranking }} AS r
JOIN models.queries AS q ON q.corpus = r.corpus AND q.query_row = r.{{ query_row }}
JOIN models.documents AS d ON d.corpus = r.corpus AND d.doc_row = r.{{ doc_row }}
{%- endmacro %}
