-- name: prefs
-- version: 1
-- stage: evaluate
-- grain: qid, jg, jsg, docno
-- audits:
-- description: Preference judgments (trec_eval -R prefs; -R qrels_prefs reads qrels as one sub-group '0'
--   per group), read through the gate: a document's rel_level within a judgment sub-group (jsg) of a
--   judgment group (jg, one user's view of the query). Within a sub-group a document is preferred to every
--   one with a lower rel_level; 0 means non-relevant.
SELECT qid, jg, jsg, docno, rel_level, line
FROM gate.prefs
