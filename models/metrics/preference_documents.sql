-- name: preference_documents
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: query, judgment_group, docno
-- audits: not_null(query, judgment_group, docno, relevant, several_sub_groups); unique_grain
-- description: The documents each judgment group of a query has preferences on (prefs), each once:
--   relevant where its rel_level is above 0 (the loader refuses a document at 0 in one sub-group and
--   above 0 in another of the group); several_sub_groups says whether the group has more than one
--   sub-group, whose preferences combine transitively (preference_pairs), where a group of one sub-group
--   orders its documents completely by rel_level (trec_eval's two ways of holding a group's preferences,
--   which the prefs_avgjg_Rnonrel measures tell apart: measure_prefs).
WITH groups AS (
    SELECT qid, jg, count(DISTINCT jsg) > 1 AS several_sub_groups
    FROM models.prefs
    GROUP BY qid, jg
)

SELECT
    p.qid AS query,
    p.jg AS judgment_group,
    p.docno,
    max(p.rel_level) > 0 AS relevant,
    g.several_sub_groups
FROM models.prefs AS p
JOIN groups AS g ON g.qid = p.qid AND g.jg = p.jg
GROUP BY p.qid, p.jg, p.docno, g.several_sub_groups
