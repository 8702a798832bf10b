-- name: preference_pairs
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query, judgment_group, preferred, other
-- audits: not_null(query, judgment_group, preferred, other); unique_grain
-- dialect: duckdb: a recursive CTE with UNION, which stops where the closure is complete (Spark's take UNION ALL only, whose paths a group of many documents multiplies without end)
-- description: The preferences of each judgment group of a query (trec_eval -R prefs, qrels_prefs): the
--   document `preferred` to the document `other`. Within a sub-group, each document is preferred to every
--   one with a lower rel_level; a group of several sub-groups prefers what they prefer together,
--   transitively (a > b in one and b > c in another: a > c), as trec_eval's closure of its preference
--   array (form_prefs_counts.c); a group of one sub-group is already transitive. The loader refuses a
--   group whose sub-groups contradict each other, so no document is preferred to itself.
WITH RECURSIVE stated AS (
    SELECT DISTINCT a.qid AS query, a.jg AS judgment_group, a.docno AS preferred, b.docno AS other
    FROM models.prefs AS a
    JOIN models.prefs AS b ON b.qid = a.qid AND b.jg = a.jg AND b.jsg = a.jsg AND a.rel_level > b.rel_level
),

groups AS (
    SELECT DISTINCT query, judgment_group, several_sub_groups
    FROM models.preference_documents
),

chains AS (
    SELECT s.query, s.judgment_group, s.preferred, s.other
    FROM stated AS s
    JOIN groups AS g ON g.query = s.query AND g.judgment_group = s.judgment_group
    WHERE g.several_sub_groups
    UNION
    SELECT c.query, c.judgment_group, c.preferred, s.other
    FROM chains AS c
    JOIN stated AS s ON s.query = c.query AND s.judgment_group = c.judgment_group AND s.preferred = c.other
)

SELECT s.query, s.judgment_group, s.preferred, s.other
FROM stated AS s
JOIN groups AS g ON g.query = s.query AND g.judgment_group = s.judgment_group
WHERE NOT g.several_sub_groups
UNION ALL
SELECT query, judgment_group, preferred, other
FROM chains
