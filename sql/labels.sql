-- A study's labels file (rankhouse.d/labels/<study>.duckdb): the labels of the study's own label inputs,
-- never in the warehouse's other files, and the evaluate-stage models built from them (schema models).
-- Attached as `labels` by loaders and as `gate` for evaluation, once the study's freeze verifies.
CREATE SCHEMA IF NOT EXISTS meta;
CREATE SCHEMA IF NOT EXISTS models;

CREATE TABLE IF NOT EXISTS meta.sources (
    table_name  VARCHAR   NOT NULL,
    name        VARCHAR   NOT NULL,
    path        VARCHAR   NOT NULL,
    sha256      VARCHAR   NOT NULL,
    rows        BIGINT    NOT NULL,
    loader      VARCHAR   NOT NULL,
    loaded_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (table_name, name)
);

-- The warehouse and study these labels belong to; such a labels file is opened (or written) by no other
-- warehouse and no other study.
CREATE TABLE IF NOT EXISTS meta.owner (
    warehouse_id  VARCHAR   NOT NULL,
    warehouse     VARCHAR   NOT NULL,  -- its path when bound, for messages
    study         VARCHAR   NOT NULL,
    bound_at      TIMESTAMP NOT NULL
);

-- TREC qrels: `qid iter docno rel`. A negative rel means "in the pool but not judged" (trec_eval).
CREATE TABLE IF NOT EXISTS qrels (
    qid    VARCHAR NOT NULL,
    iter   VARCHAR NOT NULL,
    docno  VARCHAR NOT NULL,
    rel    BIGINT  NOT NULL,
    line   BIGINT  NOT NULL
);

-- Class labels used as relevance judgments (a document is relevant to a query of the same class).
CREATE TABLE IF NOT EXISTS document_classes (
    corpus  VARCHAR NOT NULL,
    doc_id  VARCHAR NOT NULL,
    class   VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS query_classes (
    corpus  VARCHAR NOT NULL,
    qid     VARCHAR NOT NULL,
    class   VARCHAR NOT NULL
);

-- Evidence bundles' judgments (judgments.jsonl; rankhouse/loaders/evidence.py): one row per judge's
-- judgment of a pooled (task, document) pair, and one row per obligation, i.e. per requirement that
-- the judge says the document satisfies. Obligations are rows, not an INTEGER[] column, so that
-- agreement (both judges name the requirement for the same document) is a join and coverage a
-- count(DISTINCT) in portable SQL; a judgment without obligations still has its grade row.
CREATE TABLE IF NOT EXISTS evidence_judgments (
    bundle   VARCHAR NOT NULL,
    task_id  VARCHAR NOT NULL,
    doc_id   VARCHAR NOT NULL,
    judge    VARCHAR NOT NULL,  -- 'A' | 'B'
    grade    INTEGER NOT NULL,  -- 0..3
    line     BIGINT  NOT NULL   -- line number in judgments.jsonl
);
CREATE TABLE IF NOT EXISTS evidence_obligations (
    bundle       VARCHAR NOT NULL,
    task_id      VARCHAR NOT NULL,
    doc_id       VARCHAR NOT NULL,
    judge        VARCHAR NOT NULL,
    requirement  INTEGER NOT NULL  -- 0-based index into the task's requirements
);
