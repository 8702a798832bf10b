{#- Orders that decide rankings. Each is written once here and called by every model that ranks. -#}

{#- trec_eval's order of a run's documents for a query: score descending, then docno descending (byte
    order); the file's rank column is ignored. `precision` says how scores compare: "double" (the
    default) as trec_eval 10.0 stores them (a double since 2023; ir_measures and ranx also keep full
    precision), or "float" as 32-bit floats, as trec_eval 9 and pytrec_eval (which embeds it) store them:
    scores equal in float32 then tie and the docno decides. -#}
{% macro trec_order(score, docno, precision="double") -%}
{{ require(precision in ["double", "float"], 'score_precision is "double" (trec_eval 10) or "float" (trec_eval 9 and pytrec_eval)') -}}
CAST({{ score }} AS {% if precision == "float" %}FLOAT{% else %}DOUBLE{% endif %}) DESC, {{ docno }} DESC
{%- endmacro %}

{#- The seeds' order of a query's candidates: `score` descending, exact ties by `key` ascending (seed 004:
    the document's row index in its source; seed 000 and 002: the document id, or their stated keys), a
    total order where `key` is unique within the ranked group. -#}
{% macro seed_order(score="score", key="doc_row") -%}
{{ score }} DESC, {{ key }}
{%- endmacro %}

{#- The full ranking of a score source with the columns query_row, doc_row and score (models.bm25_scores,
    models.dense_scores): every document for every query, ranked in the seed order. -#}
{% macro full_ranking(source) -%}
WITH scores AS (
    SELECT query_row, doc_row, score FROM {{ source }}
)

SELECT
    query_row,
    doc_row,
    score,
    row_number() OVER (PARTITION BY query_row ORDER BY {{ seed_order() }}) AS rank
FROM scores
{%- endmacro %}

{#- A full ranking computed in parts by a Python function (bm25_full_ranking, ranked_cosines): the caller
    renders, for each part from 0 to `parts` - 1, the SELECT of one row whose column `r` is the part's
    ranking as parallel lists (query_row, doc_row, score, rank); these are unnested into rows, and the
    parts, each a pipeline of its own, run on as many threads as DuckDB has. -#}
{% macro ranked_parts(parts) -%}
{%- for part in range(parts) %}
SELECT unnest(r.query_row) AS query_row, unnest(r.doc_row) AS doc_row, unnest(r.score) AS score, unnest(r.rank) AS rank
FROM (
    {{ caller(part) | indent(4) }}
) AS ranked
{%- if not loop.last %}

UNION ALL
{% endif %}
{%- endfor %}
{%- endmacro %}

{#- trec_eval's order of a run's documents when it counts preferences (form_prefs_counts.c): score
    descending, then docno ascending, the other way round from trec_order's ties. `precision` as in
    trec_order. -#}
{% macro trec_prefs_order(score, docno, precision="double") -%}
{{ require(precision in ["double", "float"], 'score_precision is "double" (trec_eval 10) or "float" (trec_eval 9 and pytrec_eval)') -}}
CAST({{ score }} AS {% if precision == "float" %}FLOAT{% else %}DOUBLE{% endif %}) DESC, {{ docno }}
{%- endmacro %}
