-- name: run_ranking
-- version: 6
-- stage: prepare
-- grain: system, query_key, rank
-- audits:
-- parameters: depth = 0, score_precision = "double"
-- materialized: view
-- description: Every loaded TREC run's documents per query in trec_eval's order (the trec_order
--   macro: score descending, then docno descending), in the rankings shape: system = run id, query_key
--   = qid, doc_key = docno; the file's rank column is ignored. score_precision says how scores compare:
--   "double" as trec_eval 10.0 does (the default), "float" as 32-bit floats, as trec_eval 9 and
--   pytrec_eval do (scores equal in float32 tie, and the docno decides). With depth > 0
--   only the first `depth` documents are kept (trec_eval -M). A query whose lines the file lists
--   together and already in that order (run_blocks) is ranked by the lines' positions in its block,
--   which are those ranks; only the other queries are sorted, found by joining the blocks that are not
--   in order (none, usually: a join with nothing to match reads no run line). A run whose blocks do not
--   cover every line (none was recorded) is sorted whole; a run's blocks never count more lines than it
--   has, so when the blocks' lines add up to the runs' (two counts, no run line read) every run is
--   covered and no run's lines are counted. A view: its one big reader
--   (judged_ranking) keeps only the judged documents, and materialising every ranked document of a
--   large run would cost more than the whole evaluation. Not null and unique by construction
--   (positions in a block, row_number over NOT NULL columns), and never empty where a run is loaded
--   (the loader refuses a file without a line), so not audited: an audit would compute the view.
WITH line_counts AS (
    SELECT run_id, count(*) AS lines
    FROM models.runs
    WHERE (SELECT count(*) FROM models.runs) <> (SELECT coalesce(sum(lines), 0) FROM models.run_blocks)
    GROUP BY run_id
),

block_counts AS (
    SELECT run_id, sum(lines) AS lines
    FROM models.run_blocks
    GROUP BY run_id
),

uncovered_runs AS (
    SELECT l.run_id
    FROM line_counts AS l
    LEFT JOIN block_counts AS b ON b.run_id = l.run_id
    WHERE b.lines IS NULL OR b.lines <> l.lines
),

blocks AS (
    SELECT run_id, qid, first_line, {{ "float_order" if score_precision == "float" else "double_order" }} AS in_order
    FROM models.run_blocks
    WHERE run_id NOT IN (SELECT run_id FROM uncovered_runs)
),

listed_in_order AS (
    SELECT r.run_id, r.qid, r.docno, r.score, r.line - b.first_line + 1 AS rank
    FROM models.runs AS r
    JOIN blocks AS b ON b.run_id = r.run_id AND b.qid = r.qid
    WHERE b.in_order
),

to_sort AS (
    SELECT r.run_id, r.qid, r.docno, r.score
    FROM models.runs AS r
    JOIN blocks AS b ON b.run_id = r.run_id AND b.qid = r.qid
    WHERE NOT b.in_order
    UNION ALL
    SELECT r.run_id, r.qid, r.docno, r.score
    FROM models.runs AS r
    JOIN uncovered_runs AS u ON u.run_id = r.run_id
),

sorted AS (
    SELECT
        r.run_id,
        r.qid,
        r.docno,
        r.score,
        row_number() OVER (
            PARTITION BY r.run_id, r.qid ORDER BY {{ trec_order('r.score', 'r.docno', score_precision) }}
        ) AS rank
    FROM to_sort AS r
),

ranked AS (
    SELECT * FROM listed_in_order
    UNION ALL
    SELECT * FROM sorted
)

SELECT run_id AS system, qid AS query_key, docno AS doc_key, rank, score
FROM ranked
{% if depth > 0 -%}
WHERE rank <= {{ depth }}
{%- endif %}
