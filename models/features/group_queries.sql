-- name: group_queries
-- version: 1
-- stage: prepare
-- grain: item
-- audits: not_null(corpus, group_id, group_row, paraphrase, item, query_key, query_order, text); unique_grain; at_least_one_row
-- parameters: corpus = "banking77"
-- description: E3's 100 phrase queries (seed 004: 25 groups x 4 paraphrases) with their keys in the
--   rankings and judgments shapes: query_key = 1000 + 10 * group_row + paraphrase, query_id = the
--   item ('G01.1'), query_order = the phrase's 0-based position in file order (group, then paraphrase).
SELECT
    corpus,
    group_id,
    group_row,
    paraphrase,
    item,
    1000 + 10 * group_row + paraphrase AS query_key,
    CAST(row_number() OVER (ORDER BY group_row, paraphrase) - 1 AS INTEGER) AS query_order,
    text
FROM models.group_paraphrases
WHERE corpus = {{ corpus }}
