{#- BM25 as seed 004 specifies it, for every model that scores with it (retrieval, lanes, the evidence
    study's typed comparator). -#}

{#- A text's terms: lowercase Unicode letter/number runs, no stemming, no stop words. -#}
{% macro terms(text) -%}
regexp_extract_all(lower({{ text }}), '[\pL\pN]+')
{%- endmacro %}

{#- The positive Robertson IDF: ln(1 + (N - df + 0.5) / (df + 0.5)). -#}
{% macro bm25_idf(documents, df) -%}
ln(1 + ({{ documents }} - {{ df }} + 0.5) / ({{ df }} + 0.5))
{%- endmacro %}

{#- What a term adds to a document's score, idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length /
    average_length)), as a whole number of 1e-12 units: sums of whole units are exact in any order of
    addition, so documents with equal statistics get exactly equal scores and the tie rule decides. -#}
{% macro bm25_weight_units(idf, tf, length, average_length, k1, b) -%}
CAST(round(
    {{ idf }} * {{ tf }} * ({{ k1 }} + 1)
    / ({{ tf }} + {{ k1 }} * (1 - {{ b }} + {{ b }} * {{ length }} / {{ average_length }})) * 1e12
) AS BIGINT)
{%- endmacro %}

{#- BM25 (seed 004) of every (query, document) pair of `corpus`: the sum of the document's bm25_weights
    over the query's distinct terms, 0 when they share no term. `query_terms` is a relation of (corpus,
    <key>, term), one row per distinct term of a query, `queries` one of (corpus, <key>), every query
    once; the query's key column is `key`. `documents`, when given, is a relation of (corpus, doc_row):
    only those documents are scored (a null panel), else every document of the corpus. The weights are
    whole 1e-12 units, so while no score reaches 2^53 units (9,007.2) their sum in doubles is exact in
    any order of addition, and a document's score is the same whichever documents are scored with it. -#}
{% macro bm25_sums(query_terms, queries, key, corpus, documents=none) -%}
WITH term_matches AS (
    SELECT CAST(q.{{ key }} AS INTEGER) AS {{ key }}, CAST(w.doc_row AS INTEGER) AS doc_row, w.weight_units
    FROM {{ query_terms }} AS q
    JOIN models.bm25_weights AS w ON w.term = q.term
    {%- if documents %}
    JOIN {{ documents }} AS scored ON scored.corpus = w.corpus AND scored.doc_row = w.doc_row
    {%- endif %}
    WHERE q.corpus = {{ corpus | literal }} AND w.corpus = {{ corpus | literal }}
),

-- Every pair once with weight 0, so that a pair without a common term still gets its score of 0.
every_pair AS (
    SELECT
        CAST(q.{{ key }} AS INTEGER) AS {{ key }},
        CAST(d.doc_row AS INTEGER) AS doc_row,
        CAST(0 AS BIGINT) AS weight_units
    FROM {{ queries }} AS q
    CROSS JOIN {{ documents or 'models.documents' }} AS d
    WHERE q.corpus = {{ corpus | literal }} AND d.corpus = {{ corpus | literal }}
)

-- 32-bit row keys: DuckDB sums over their known ranges into an array (a model's `aggregate: array`),
-- and a ranking's sort is faster on them.
SELECT
    {{ corpus | literal }} AS corpus,
    u.{{ key }},
    u.doc_row,
    sum(CAST(u.weight_units AS DOUBLE)) / 1e12 AS score
FROM (SELECT * FROM term_matches UNION ALL SELECT * FROM every_pair) AS u
GROUP BY u.{{ key }}, u.doc_row
{%- endmacro %}
