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
    once; the query's key column is `key`, a whole number. `documents`, when given, is a relation of
    (corpus, doc_row): only those documents are scored (a null panel), else every document of the corpus.
    The weights are whole 1e-12 units, so while no score reaches 2^53 units (9,007.2) their sum in
    doubles is exact in any order of addition, and a document's score is the same whichever documents
    are scored with it. With `parts` > 1 the queries are summed in that many parts (by key modulo
    `parts`), each its own join and GROUP BY, over pair numbers of its own, (key // parts) * documents +
    doc_row: DuckDB runs a join over tables this small on one thread and the parts on as many, and a
    part's numbers span 1/parts of the range, so its array is that much smaller (BANKING77's 30.8M sums
    then fit in arrays under the demo's memory limit; as measured: docs/performance.md). -#}
{% macro bm25_sums(query_terms, queries, key, corpus, documents=none, parts=1) -%}
WITH collection AS (
    SELECT documents FROM models.bm25_collection WHERE corpus = {{ corpus | literal }}
),

-- A pair's number, key * documents + doc_row (in parts: (key // parts) * documents + doc_row): one
-- whole number per pair, from a range DuckDB knows from the tables' statistics, so the sums below go
-- into a directly indexed array (a model's `aggregate: array`) half the size of one indexed by the key
-- and the row apart.
pair_sums AS (
    {%- for part in range(parts) %}
    SELECT {% if parts > 1 %}{{ part }} AS part, {% endif %}u.pair, sum(CAST(u.weight_units AS DOUBLE)) / 1e12 AS score
    FROM (
        {{ _term_matches(query_terms, key, corpus, documents, part, parts) | indent(8) }}

        UNION ALL

        {{ _every_pair(queries, key, corpus, documents, part, parts) | indent(8) }}
    ) AS u
    GROUP BY u.pair
    {%- if not loop.last %}

    UNION ALL
    {%- endif %}
    {%- endfor %}
)

-- 32-bit row keys: a ranking's sort is faster on them.
SELECT
    {{ corpus | literal }} AS corpus,
    {%- if parts > 1 %}
    CAST((s.pair // c.documents) * {{ parts }} + s.part AS INTEGER) AS {{ key }},
    {%- else %}
    CAST(s.pair // c.documents AS INTEGER) AS {{ key }},
    {%- endif %}
    CAST(s.pair % c.documents AS INTEGER) AS doc_row,
    s.score
FROM pair_sums AS s
CROSS JOIN collection AS c
{%- endmacro %}

{#- The weight of each term a query of part `part` (of `parts`) shares with a document, by pair number. -#}
{% macro _term_matches(query_terms, key, corpus, documents, part, parts) -%}
SELECT {{ _part_key(key, parts) }} * c.documents + w.doc_row AS pair, w.weight_units
FROM {{ query_terms }} AS q
JOIN models.bm25_weights AS w ON w.term = q.term
{%- if documents %}
JOIN {{ documents }} AS scored ON scored.corpus = w.corpus AND scored.doc_row = w.doc_row
{%- endif %}
CROSS JOIN collection AS c
WHERE q.corpus = {{ corpus | literal }} AND w.corpus = {{ corpus | literal }}{{ _in_part(key, part, parts) }}
{%- endmacro %}

{#- Every pair of a query of part `part` once with weight 0, so that a pair without a common term still
    gets its score of 0. -#}
{% macro _every_pair(queries, key, corpus, documents, part, parts) -%}
SELECT {{ _part_key(key, parts) }} * c.documents + d.doc_row AS pair, CAST(0 AS BIGINT) AS weight_units
FROM {{ queries }} AS q
CROSS JOIN {{ documents or 'models.documents' }} AS d
CROSS JOIN collection AS c
WHERE q.corpus = {{ corpus | literal }} AND d.corpus = {{ corpus | literal }}{{ _in_part(key, part, parts) }}
{%- endmacro %}

{#- A query's number within its part: its key, or key // parts when the queries are summed in parts. -#}
{% macro _part_key(key, parts) -%}
{% if parts > 1 %}(q.{{ key }} // {{ parts }}){% else %}q.{{ key }}{% endif %}
{%- endmacro %}

{#- The condition that a query is in part `part`, when the queries are summed in parts. -#}
{% macro _in_part(key, part, parts) -%}
{% if parts > 1 %} AND q.{{ key }} % {{ parts }} = {{ part }}{% endif %}
{%- endmacro %}

{#- The full BM25 ranking of `corpus` (query_row, doc_row, score, rank: every document for every query, by
    score descending, exact ties by doc_row ascending): the scores bm25_sums computes, to the bit, ranked
    in the seed order (full_ranking), by the Python function bm25_full_ranking (rankhouse/bm25.py), which
    a model calling this names in its `functions:`. `query_terms` is a relation of (corpus, query_row,
    term), one row per distinct term of a query, `queries` one of (corpus, query_row), every query once.
    Each term's postings (its documents' rows and weight units) go to the function once per part, with
    the part's queries and the indices of their terms; the queries go in `parts` (by query_row modulo
    `parts`), one call each, so that one part's ranking is in memory at a time on each thread. -#}
{% macro bm25_full_ranking(query_terms, queries, corpus, parts=16) -%}
WITH collection AS (
    SELECT documents FROM models.bm25_collection WHERE corpus = {{ corpus | literal }}
),

terms AS (
    SELECT
        term,
        row_number() OVER (ORDER BY term) - 1 AS term_index,
        list(CAST(doc_row AS INTEGER) ORDER BY doc_row) AS doc_rows,
        list(weight_units ORDER BY doc_row) AS weight_units
    FROM models.bm25_weights
    WHERE corpus = {{ corpus | literal }}
    GROUP BY term
),

postings AS (
    SELECT list({'doc_rows': doc_rows, 'weight_units': weight_units} ORDER BY term_index) AS postings
    FROM terms
),

query_terms AS (
    SELECT
        q.query_row,
        q.query_row % {{ parts }} AS part,
        coalesce(list(CAST(s.term_index AS INTEGER) ORDER BY s.term_index) FILTER (WHERE s.term_index IS NOT NULL), []) AS terms
    FROM {{ queries }} AS q
    LEFT JOIN {{ query_terms }} AS t ON t.corpus = q.corpus AND t.query_row = q.query_row
    LEFT JOIN terms AS s ON s.term = t.term
    WHERE q.corpus = {{ corpus | literal }}
    GROUP BY q.query_row
),

parts AS (
    SELECT part, list({'query_row': CAST(query_row AS INTEGER), 'terms': terms} ORDER BY query_row) AS queries
    FROM query_terms
    GROUP BY part
)

{% call(part) ranked_parts(parts) -%}
SELECT bm25_full_ranking(p.queries, s.postings, c.documents) AS r
FROM parts AS p
CROSS JOIN postings AS s
CROSS JOIN collection AS c
WHERE p.part = {{ part }}
{%- endcall %}
{%- endmacro %}
