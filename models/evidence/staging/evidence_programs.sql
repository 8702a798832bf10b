-- name: evidence_programs
-- version: 1
-- stage: prepare
-- grain: program
-- audits:
-- materialized: view
-- description: The SHA-256 of the Python selection program a model calls (raw.evidence_programs).
SELECT program, sha256
FROM raw.evidence_programs
