-- The labels file: every kind of relevance label, kept apart from the main warehouse file.
-- Attached as `labels` (read-write) by loaders and as `gate` (read-only) for evaluation.
CREATE SCHEMA IF NOT EXISTS meta;

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
