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
