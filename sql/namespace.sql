-- A study's namespace file (rankhouse.d/studies/<study>.duckdb; `default` for commands run outside a
-- study): its models as views (a table model's view reads its table in the store, by fingerprint), its
-- slice of the inputs (raw.*, views), its results and its bookkeeping. Written only by the study's own
-- runs; see rankhouse/warehouse/layout.py. No label row is ever written here (labels.sql).
CREATE SCHEMA IF NOT EXISTS models;
CREATE SCHEMA IF NOT EXISTS raw;      -- a study's slice of the inputs (views; empty in the default namespace)
CREATE SCHEMA IF NOT EXISTS results;  -- evaluate outputs, one copy per freeze (a freeze_id column first)
CREATE SCHEMA IF NOT EXISTS meta;

-- The protocol the study was last prepared from.
CREATE TABLE IF NOT EXISTS meta.studies (
    study            VARCHAR   NOT NULL PRIMARY KEY,
    protocol_path    VARCHAR   NOT NULL,
    registered_at    TIMESTAMP NOT NULL
);

-- The study's slice of the shared inputs: per raw table, the rows that the study's inputs and generators
-- wrote, each set given by the values of its key columns (rankhouse/study/ledger.py), with the meta.sources name
-- that records its content (no row there: not recorded). The study's raw.* views show these rows and no
-- others, and its models are fingerprinted with these sources only: another study's loads change nothing.
CREATE TABLE IF NOT EXISTS meta.loads (
    table_name   VARCHAR NOT NULL,  -- e.g. 'raw.documents'
    key          VARCHAR NOT NULL,  -- JSON {column: value}, e.g. {"corpus": "banking77"}
    source_name  VARCHAR,           -- e.g. 'banking77/documents' (the name in meta.sources)
    origin       VARCHAR NOT NULL   -- the protocol entry: 'inputs.<key>' or 'generate.<key>'
);

-- What the study's loads produced: per input file (its SHA-256) and the name it was loaded under, the
-- SHA-256 of the rows it produced (the canonical export of each table the loader writes,
-- rankhouse/study/ledger.py), so that rows edited after loading are told from the file's: by the row digest
-- first, by the content where that differs (or is not recorded). Labels tables are named
-- `labels.<table>`: their digests live here, on the label-free side, not in the labels file they check.
CREATE TABLE IF NOT EXISTS meta.source_contents (
    table_name      VARCHAR   NOT NULL,  -- as in meta.sources (labels tables prefixed `labels.`)
    name            VARCHAR   NOT NULL,
    sha256          VARCHAR   NOT NULL,  -- of the file
    content_sha256  VARCHAR   NOT NULL,
    recorded_at     TIMESTAMP NOT NULL,
    row_digest      VARCHAR,             -- the same rows' row digest (freeze.py), taken with content_sha256
    PRIMARY KEY (table_name, name, sha256)
);
-- loads recorded before row digests were (rankhouse 0.1, carried over by `rankhouse migrate`) are checked by content
ALTER TABLE meta.source_contents ADD COLUMN IF NOT EXISTS row_digest VARCHAR;

-- Every model run, skipped and failed ones included.
CREATE TABLE IF NOT EXISTS meta.model_runs (
    model        VARCHAR   NOT NULL,
    fingerprint  VARCHAR   NOT NULL,
    status       VARCHAR   NOT NULL,  -- 'built', 'skipped' (fingerprint unchanged) or 'failed'
    rows         BIGINT,
    seconds      DOUBLE    NOT NULL,
    started_at   TIMESTAMP NOT NULL,
    message      VARCHAR
);

-- What each model's last build left in the catalog: the SHA-256 of its view's or table's definition
-- (duckdb_views().sql, duckdb_tables().sql), so that an object redefined by hand is not taken for it.
CREATE TABLE IF NOT EXISTS meta.model_objects (
    model              VARCHAR NOT NULL,
    fingerprint        VARCHAR NOT NULL,
    definition_sha256  VARCHAR NOT NULL
);

-- Store files (rankhouse.d/store/<segment>.duckdb) this namespace's builds were writing when they were
-- interrupted: sealed when the namespace is next opened for writing.
CREATE TABLE IF NOT EXISTS meta.building (
    segment  VARCHAR NOT NULL
);

-- The freeze files (freezes/<study>-<n>.json) this study wrote, each with its SHA-256: a file without
-- its row is never trusted (rankhouse/study/freeze.py).
CREATE TABLE IF NOT EXISTS meta.freezes (
    freeze_id        VARCHAR   NOT NULL PRIMARY KEY,  -- <study>-<n>
    study            VARCHAR   NOT NULL,
    n                INTEGER   NOT NULL,
    path             VARCHAR   NOT NULL,
    file_sha256      VARCHAR   NOT NULL,
    protocol_sha256  VARCHAR   NOT NULL,
    created_at       VARCHAR   NOT NULL,
    supersedes       VARCHAR,
    reason           VARCHAR
);

-- Every evaluation: which freeze it ran under and the evaluate models' fingerprints.
CREATE TABLE IF NOT EXISTS meta.evaluations (
    freeze_id        VARCHAR   NOT NULL,
    evaluated_at     TIMESTAMP NOT NULL,
    fingerprints     VARCHAR   NOT NULL  -- JSON: model -> fingerprint
);
