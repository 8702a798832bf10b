-- name: qrels
-- version: 1
-- stage: evaluate
-- grain: qid, docno
-- audits:
-- description: TREC qrels, read through the gate (a table, so that nothing in the warehouse refers to the labels file once it is detached again): a negative rel means pooled but not judged (trec_eval).
SELECT qid, iter, docno, rel, line
FROM gate.qrels
