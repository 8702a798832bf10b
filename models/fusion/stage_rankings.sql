-- name: stage_rankings
-- version: 1
-- stage: evaluate
-- grain: system, query_key, rank
-- audits: not_null(system, query_key, doc_key, rank, score); accepted_range(rank, 1, )
-- parameters: stage_rules = ["dense", "rrf", "mixture"]
-- description: The pipeline's stages after admission (seed 003, section 9: separate admission, fusion and
--   downstream stages on frozen scores), in the rankings shape: for each rule of stage_rules, system
--   <rule>_admitted is the rule's ranking (fused_rankings) kept to the candidates admission retains (admitted
--   at eq. 27's level, or the dense top reserve_depth kept as fallback: admission), ranked 1.. in the rule's
--   order. Label-free, from frozen tables; the protocol evaluates these stages beside the frozen rankings and
--   stage_transitions measures eq. 20 at every transition. Unique by construction (row_number per query).
SELECT
    r.rule || '_admitted' AS system,
    r.query_row AS query_key,
    r.doc_row AS doc_key,
    row_number() OVER (PARTITION BY r.rule, r.query_row ORDER BY r.rank) AS rank,
    r.score
FROM models.fused_rankings AS r
JOIN models.admission AS a ON a.corpus = r.corpus AND a.query_row = r.query_row AND a.doc_row = r.doc_row
WHERE r.rule IN {{ stage_rules | literal }} AND (a.admitted OR a.fallback)
