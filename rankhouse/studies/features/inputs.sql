-- The named-features study's tables in the warehouse's inputs file (seed 004 E2-E5; run after
-- sql/warehouse.sql: rankhouse/registry.py Tables; schema.py, extraction/, docs/features.md). The schema:
-- 34 properties, each with a fixed question, keyed by the file's SHA-256.
CREATE TABLE IF NOT EXISTS raw.feature_schema (
    schema         VARCHAR NOT NULL,  -- the name the schema file is loaded under (a protocol input's name)
    schema_sha256  VARCHAR NOT NULL,  -- of the schema file's bytes: it keys every extraction
    position       INTEGER NOT NULL,  -- 1-based order in the file
    feature        VARCHAR NOT NULL,
    family         VARCHAR NOT NULL,
    question       VARCHAR NOT NULL
);
-- The extraction store: one row per message and feature, written by the feature_extraction generator,
-- one committed transaction per completed message (resumable: a restart extracts only what is missing).
-- Keyed by (corpus, split, row_index, schema_sha256, extractor): a changed schema or provider never
-- counts another's rows.
CREATE TABLE IF NOT EXISTS raw.feature_values (
    corpus         VARCHAR NOT NULL,
    split          VARCHAR NOT NULL,  -- 'train' (raw.documents) | 'test' (raw.queries)
    row_index      INTEGER NOT NULL,  -- raw.documents.row_index / raw.queries.row_index
    schema_sha256  VARCHAR NOT NULL,
    extractor      VARCHAR NOT NULL,  -- '<provider>:<model id>': 'minilm:<encoder fingerprint[:12]>', 'http:<model>'
    feature        VARCHAR NOT NULL,
    value          DOUBLE  NOT NULL   -- in [0, 1], rounded to 3 decimals (exact thousandths)
);
-- Every extraction attempt, failed ones too: the receipts (models/features/extraction_receipts.sql).
CREATE TABLE IF NOT EXISTS raw.extraction_calls (
    corpus             VARCHAR   NOT NULL,
    split              VARCHAR   NOT NULL,  -- 'train' | 'test' | 'requirements' (E3 interpretation)
    row_index          INTEGER,             -- the message's row; for 'requirements' the E3 query key
                                            -- 1000 + 10 * group_row + paraphrase; NULL: one batch call
                                            -- over the split's rows (the minilm stand-in)
    schema_sha256      VARCHAR   NOT NULL,
    extractor          VARCHAR   NOT NULL,
    attempt            INTEGER   NOT NULL,  -- 1-based, per row, continued across restarts
    provider           VARCHAR   NOT NULL,  -- 'http' | 'minilm'
    model_id           VARCHAR,             -- the response's "model" field (http), the encoder (minilm)
    started_at         TIMESTAMP NOT NULL,  -- UTC
    latency_seconds    DOUBLE    NOT NULL,
    status             VARCHAR   NOT NULL,  -- ok | http_429 | http_5xx | http_4xx | timeout | connection
                                            -- | malformed | invalid
    prompt_tokens      BIGINT,              -- the response's usage; NULL when not reported
    completion_tokens  BIGINT,
    cost_usd           DOUBLE    NOT NULL,  -- estimated: usage x prices, or the prompt's estimate
    possibly_charged   BOOLEAN   NOT NULL,  -- a failed attempt that may still have been charged
    error              VARCHAR
);
-- E3 interpreted requirements: the provider's reading of each natural-language phrase of
-- raw.group_paraphrases as one weight per feature, and its flags.
CREATE TABLE IF NOT EXISTS raw.requirement_values (
    corpus         VARCHAR NOT NULL,
    item           VARCHAR NOT NULL,  -- '<group_id>.<paraphrase>', e.g. 'G01.1'
    schema_sha256  VARCHAR NOT NULL,
    extractor      VARCHAR NOT NULL,
    feature        VARCHAR NOT NULL,
    weight         DOUBLE  NOT NULL   -- in [0, 1], rounded to 3 decimals
);
CREATE TABLE IF NOT EXISTS raw.requirement_flags (
    corpus         VARCHAR NOT NULL,
    item           VARCHAR NOT NULL,
    schema_sha256  VARCHAR NOT NULL,
    extractor      VARCHAR NOT NULL,
    unsupported    BOOLEAN NOT NULL,  -- the phrase asks for something the features cannot express
    review         BOOLEAN NOT NULL,  -- the interpretation is uncertain
    coverage       DOUBLE  NOT NULL,  -- the largest weight
    note           VARCHAR
);

-- E3 semantic groups and E4 controllability cases (seed 004; groups.py):
-- the groups file's paraphrases and intent names, and the requirements file's manual weights and
-- cases, each loaded under a corpus name. Intent names here are the groups' and cases' definitions,
-- not any message's label (those stay in the labels file).
CREATE TABLE IF NOT EXISTS raw.group_paraphrases (
    corpus      VARCHAR NOT NULL,
    group_id    VARCHAR NOT NULL,
    group_row   INTEGER NOT NULL,  -- position of the group in its file (0-based)
    paraphrase  INTEGER NOT NULL,  -- 1-4, in the file's order
    item        VARCHAR NOT NULL,  -- group_id || '.' || paraphrase, e.g. 'G01.1'
    text        VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.group_intents (
    corpus    VARCHAR NOT NULL,
    group_id  VARCHAR NOT NULL,
    intent    VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.group_weights (
    corpus    VARCHAR NOT NULL,
    group_id  VARCHAR NOT NULL,
    feature   VARCHAR NOT NULL,
    weight    DOUBLE  NOT NULL  -- in (0, 1]
);
CREATE TABLE IF NOT EXISTS raw.control_cases (
    corpus            VARCHAR NOT NULL,
    case_id           VARCHAR NOT NULL,
    case_row          INTEGER NOT NULL,  -- position of the case in its file (0-based)
    name              VARCHAR NOT NULL,
    unwanted_feature  VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.case_weights (
    corpus   VARCHAR NOT NULL,
    case_id  VARCHAR NOT NULL,
    feature  VARCHAR NOT NULL,
    weight   DOUBLE  NOT NULL  -- in (0, 1]: the case's positive query
);
CREATE TABLE IF NOT EXISTS raw.case_intents (
    corpus   VARCHAR NOT NULL,
    case_id  VARCHAR NOT NULL,
    intent   VARCHAR NOT NULL,
    role     VARCHAR NOT NULL  -- 'desired' | 'unwanted'
);
