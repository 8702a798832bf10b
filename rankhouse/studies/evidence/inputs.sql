-- The evidence study's tables in the warehouse's inputs file (seed 000; run after sql/warehouse.sql:
-- rankhouse/registry.py Tables). Evidence bundles (loaders.py, docs/evidence_bundle.md): tasks, each a
-- question with plain-language requirements, a document collection, a judged pool per task and,
-- optionally, the bundle's own document vectors. Several bundles coexist, each by its name (`bundle`).
-- Judgments are labels: they live in the labels file (labels.sql beside this file).
CREATE TABLE IF NOT EXISTS raw.evidence_tasks (
    bundle     VARCHAR NOT NULL,
    task_id    VARCHAR NOT NULL,
    row_index  BIGINT  NOT NULL,  -- position in tasks.jsonl (0-based)
    question   VARCHAR NOT NULL,
    split      VARCHAR NOT NULL   -- 'development' | 'final'
);
CREATE TABLE IF NOT EXISTS raw.evidence_requirements (
    bundle       VARCHAR NOT NULL,
    task_id      VARCHAR NOT NULL,
    requirement  INTEGER NOT NULL,  -- 0-based index in the task's list, as judgments' obligations name it
    text         VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.evidence_documents (
    bundle     VARCHAR NOT NULL,
    doc_id     VARCHAR NOT NULL,
    row_index  BIGINT  NOT NULL,  -- position in documents.jsonl (0-based)
    text       VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.evidence_pools (
    bundle    VARCHAR NOT NULL,
    task_id   VARCHAR NOT NULL,
    doc_id    VARCHAR NOT NULL,
    position  INTEGER NOT NULL  -- 0-based position in the task's list in pool-key.json
);
CREATE TABLE IF NOT EXISTS raw.evidence_vectors (
    bundle  VARCHAR    NOT NULL,
    doc_id  VARCHAR    NOT NULL,
    vector  FLOAT[384] NOT NULL  -- unit norm (checked within 1e-4 on load)
);

-- The evidence_vectors generator (generators.py): each task's facets encoded one by one, the
-- question (facet 0) and each requirement as written (facet k + 1 for requirement k), no rewriting.
CREATE TABLE IF NOT EXISTS raw.evidence_facet_vectors (
    bundle   VARCHAR    NOT NULL,
    task_id  VARCHAR    NOT NULL,
    facet    INTEGER    NOT NULL,  -- 0: the question; k + 1: requirement k
    vector   FLOAT[384] NOT NULL
);
-- The Python selection program that a model calls as a UDF (evidence_greedy), by the SHA-256 of its
-- source: the model reads this row, so a changed program changes its fingerprint and the freeze.
CREATE TABLE IF NOT EXISTS raw.evidence_programs (
    program  VARCHAR NOT NULL,
    sha256   VARCHAR NOT NULL
);
