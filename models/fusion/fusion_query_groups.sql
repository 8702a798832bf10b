-- name: fusion_query_groups
-- version: 1
-- stage: evaluate
-- grain: corpus, query_row
-- audits: not_null(corpus, query_row, qid, block, query_group, query_length, length_bin); unique_grain; at_least_one_row
-- parameters: corpus = "banking77", block_plan = "query_blocks", fusion_groups = "query_blocks"
-- columns: block = "The query's held-out block (a seeded plan: seed 003, section 9 holds calibration out by
--   query blocks, never by pairs)", query_group = "The query's group for the per-group measurements: its
--   block, or its class (BANKING77's intent) when fusion_groups = 'query_classes'", query_length = "The
--   query's distinct terms (as BM25 reads it)", length_bin = "short, medium or long: up to the first
--   tertile of the lengths, up to the second, above"
-- description: What section 9 (seed 003) stratifies and splits the queries by: each query's held-out
--   block from the stored seeded plan `block_plan` (rankhouse/resample.py block_draws), its group (the
--   block, or with fusion_groups = 'query_classes' its class, read through the gate), its length in
--   distinct terms and the length's tertile bin over the corpus's queries (a label-free rule declared
--   before any outcome: short up to the value at position ceil(n/3) of the sorted lengths, medium up to
--   ceil(2n/3), long above).
{{- require(fusion_groups in ["query_blocks", "query_classes"], "fusion_groups is query_blocks or query_classes") }}
WITH lengths AS (
    SELECT q.query_row, q.qid, count(t.term) AS query_length
    FROM models.queries AS q
    LEFT JOIN models.query_tokens AS t ON t.corpus = q.corpus AND t.query_row = q.query_row
    WHERE q.corpus = {{ corpus | literal }}
    GROUP BY q.query_row, q.qid
),

{{ tertile_edges('edges', 'lengths', 'query_length', 'query_row') }},

blocks AS (
    SELECT draw AS query_row, item AS block
    FROM models.resample_plans
    WHERE plan = {{ block_plan | literal }} AND replicate = 0
)

SELECT
    {{ corpus | literal }} AS corpus,
    l.query_row,
    l.qid,
    b.block,
    {% if fusion_groups == "query_classes" -%}
    c.class AS query_group,
    {%- else -%}
    'block ' || CAST(b.block AS VARCHAR) AS query_group,
    {%- endif %}
    l.query_length,
    {{ tertile_bin('l.query_length', 'e') }} AS length_bin
FROM lengths AS l
CROSS JOIN edges AS e
JOIN blocks AS b ON b.query_row = l.query_row
{%- if fusion_groups == "query_classes" %}
JOIN models.query_classes AS c ON c.corpus = {{ corpus | literal }} AND c.qid = l.qid
{%- endif %}
