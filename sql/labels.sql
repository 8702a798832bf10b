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

-- trec_eval's other relevance formats (rankhouse/loaders/trec.py), each replaced whole by a load.
-- Preference judgments: `qid jg jsg docno rel_level` (trec_eval -R prefs), or `qid jg docno rel_level`
-- (-R qrels_prefs, read as one sub-group per group, jsg '0'). Within a judgment sub-group (jsg) of a
-- judgment group (jg: one user's view of the query), a document with a higher rel_level is preferred to one
-- with a lower; 0 means non-relevant.
CREATE TABLE IF NOT EXISTS prefs (
    qid        VARCHAR NOT NULL,
    jg         VARCHAR NOT NULL,
    jsg        VARCHAR NOT NULL,
    docno      VARCHAR NOT NULL,
    rel_level  DOUBLE  NOT NULL,
    line       BIGINT  NOT NULL
);
-- Qrels with judgment groups: `qid jg docno rel` (trec_eval -R qrels_jg), a set of qrels per group.
CREATE TABLE IF NOT EXISTS qrels_jg (
    qid    VARCHAR NOT NULL,
    jg     VARCHAR NOT NULL,
    docno  VARCHAR NOT NULL,
    rel    BIGINT  NOT NULL,
    line   BIGINT  NOT NULL
);
-- A z-score file: `qid measure mean stddev` (trec_eval -Z), per query and measure (as trec_eval prints its
-- name) the mean and standard deviation that turn a value into a z-score. canonical is the measure as
-- rankhouse names it (NULL: a name that is no measure's).
CREATE TABLE IF NOT EXISTS zscores (
    qid        VARCHAR NOT NULL,
    measure    VARCHAR NOT NULL,
    canonical  VARCHAR,
    mean       DOUBLE  NOT NULL,
    stddev     DOUBLE  NOT NULL,
    line       BIGINT  NOT NULL
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
