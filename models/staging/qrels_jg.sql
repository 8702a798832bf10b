-- name: qrels_jg
-- version: 1
-- stage: evaluate
-- grain: qid, jg, docno
-- audits:
-- description: Qrels with judgment groups (trec_eval -R qrels_jg), read through the gate: a set of qrels
--   per judgment group (jg, one user's judgments of the query); a negative rel means pooled but not judged.
SELECT qid, jg, docno, rel, line
FROM gate.qrels_jg
