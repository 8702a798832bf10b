-- name: evidence_agreed_obligations
-- version: 2
-- stage: evaluate
-- holds: labels
-- grain: bundle, task_id, doc_id, requirement
-- audits: not_null(bundle, task_id, doc_id, requirement); unique_grain
-- parameters: bundle = "evidence_demo"
-- description: Seed 000's agreed labels ("agreedLabels"): per document, the requirements that both
--   judge A and judge B list for that same document (obligationsA intersected with obligationsB).
--   Agreement is never assembled across documents: the join is on the document.
SELECT a.bundle, a.task_id, a.doc_id, a.requirement
FROM models.evidence_obligations AS a
JOIN models.evidence_obligations AS b
    ON b.bundle = a.bundle AND b.task_id = a.task_id AND b.doc_id = a.doc_id AND b.requirement = a.requirement
WHERE a.bundle = {{ bundle | literal }} AND a.judge = 'A' AND b.judge = 'B'
