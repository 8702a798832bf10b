{#- The dense (MiniLM) retrieval score of seed 004, for every model that scores with it. -#}

{#- Cosine of every (query, document) pair of `corpus`: the inner product of their unit MiniLM vectors
    (models.query_vectors, models.document_vectors). `documents`, when given, is a relation of (corpus,
    doc_row): only those documents are scored (a null panel), else every document of the corpus. DuckDB
    only: FLOAT[384] vectors. The products are list_inner_product's over the vectors as FLOAT[] lists: the
    same float32 sums as array_inner_product's, bit for bit (all 30.8M BANKING77 pairs compared), and
    faster. DuckDB computes a cross join's products on one thread (its input, a few thousand query rows,
    is one scan task), so the queries go in `parts` by row number, each part a pipeline of its own, and the
    parts run on as many threads; the same rows (both as measured: docs/performance.md). -#}
{% macro cosines(corpus, documents=none, parts=4) -%}
WITH documents AS (
    SELECT d.corpus, d.doc_row, v.vector
    FROM models.documents AS d
    JOIN models.document_vectors AS v ON v.corpus = d.corpus AND v.doc_id = d.doc_id
    {%- if documents %}
    JOIN {{ documents }} AS scored ON scored.corpus = d.corpus AND scored.doc_row = d.doc_row
    {%- endif %}
    WHERE d.corpus = {{ corpus | literal }}
),

queries AS (
    SELECT q.corpus, q.query_row, v.vector
    FROM models.queries AS q
    JOIN models.query_vectors AS v ON v.corpus = q.corpus AND v.qid = q.qid
    WHERE q.corpus = {{ corpus | literal }}
)

{%- for part in range(parts) %}

SELECT q.corpus, q.query_row, d.doc_row, list_inner_product(q.vector::FLOAT[], d.vector::FLOAT[]) AS score
FROM queries AS q
CROSS JOIN documents AS d
WHERE q.query_row % {{ parts }} = {{ part }}
{%- if not loop.last %}

UNION ALL
{%- endif %}
{%- endfor %}
{%- endmacro %}

{#- The full dense ranking of `corpus` (query_row, doc_row, score, rank: every document for every query, by
    cosine descending, exact ties by doc_row ascending): the cosines `cosines` computes, to the bit
    (list_inner_product's), ranked in the seed order (full_ranking) by the Python function ranked_cosines
    (rankhouse/ranking.py: the products by BLAS where this machine's BLAS gives list_inner_product's bits,
    checked against DuckDB on every call, else DuckDB's own), which a model calling this names in its
    `functions:`. The documents' vectors are one list in doc_row order, so that they need no sort to reach
    the function; the queries go in `parts` (by query_row modulo `parts`), each part one row of lists, a
    pipeline and one call of its own, run on as many threads as DuckDB has. -#}
{% macro dense_full_ranking(corpus, parts=16) -%}
WITH documents AS (
    SELECT
        list(d.doc_row ORDER BY d.doc_row) AS doc_rows,
        list(CAST(v.vector AS FLOAT[]) ORDER BY d.doc_row) AS vectors
    FROM models.documents AS d
    JOIN models.document_vectors AS v ON v.corpus = d.corpus AND v.doc_id = d.doc_id
    WHERE d.corpus = {{ corpus | literal }}
),

parts AS (
    SELECT
        q.query_row % {{ parts }} AS part,
        list(q.query_row ORDER BY q.query_row) AS query_rows,
        list(CAST(v.vector AS FLOAT[]) ORDER BY q.query_row) AS vectors
    FROM models.queries AS q
    JOIN models.query_vectors AS v ON v.corpus = q.corpus AND v.qid = q.qid
    WHERE q.corpus = {{ corpus | literal }}
    GROUP BY part
)

{% call(part) ranked_parts(parts) -%}
SELECT ranked_cosines(p.query_rows, p.vectors, d.doc_rows, d.vectors) AS r
FROM parts AS p
CROSS JOIN documents AS d
WHERE p.part = {{ part }}
{%- endcall %}
{%- endmacro %}
