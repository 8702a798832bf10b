-- The warehouse's inputs file (the file `--db` names): every loaded and generated table (raw.*), shared by
-- every study, and what was loaded (meta.sources). Models, results and freezes live in each study's
-- namespace file (namespace.sql), labels in each study's labels file (labels.sql); see
-- rankhouse/warehouse/layout.py.
CREATE SCHEMA IF NOT EXISTS raw;
CREATE SCHEMA IF NOT EXISTS meta;

-- The warehouse's identity (a random id made when the file is created): every other file of the warehouse
-- records it (meta.layout), so that no file of one warehouse is taken for another's.
CREATE TABLE IF NOT EXISTS meta.warehouse (
    id          VARCHAR   NOT NULL,
    created_at  TIMESTAMP NOT NULL
);

-- One row per loaded file and name; loading the same bytes under the same name is a no-op.
CREATE TABLE IF NOT EXISTS meta.sources (
    table_name  VARCHAR   NOT NULL,  -- the table the rows went to, e.g. 'raw.runs'
    name        VARCHAR   NOT NULL,  -- the name the rows are loaded under (a run id, a data set)
    path        VARCHAR   NOT NULL,
    sha256      VARCHAR   NOT NULL,  -- of the file's bytes
    rows        BIGINT    NOT NULL,
    loader      VARCHAR   NOT NULL,
    loaded_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (table_name, name)
);

-- TREC runs side by side: `qid Q0 docno rank score tag`, one row per line of the file.
CREATE TABLE IF NOT EXISTS raw.runs (
    run_id  VARCHAR NOT NULL,
    qid     VARCHAR NOT NULL,
    docno   VARCHAR NOT NULL,
    rank    BIGINT  NOT NULL,  -- kept as written; rankings use score, then docno (trec_eval)
    score   DOUBLE  NOT NULL,
    tag     VARCHAR NOT NULL,
    line    BIGINT  NOT NULL   -- line number in the source file
);

-- Where each query's lines are in a loaded run file (rankhouse/loaders/query_blocks.py): its first line
-- and its number of lines, and whether those are the consecutive lines from the first, in trec_eval's
-- order (score descending, then docno descending), comparing scores as doubles and as 32-bit floats. The
-- fast reader finds them as it reads; the general reader records every query in no order. run_ranking
-- ranks the lines of a query in order by their position instead of sorting them.
CREATE TABLE IF NOT EXISTS raw.run_blocks (
    run_id        VARCHAR NOT NULL,
    qid           VARCHAR NOT NULL,
    first_line    BIGINT  NOT NULL,
    lines         BIGINT  NOT NULL,
    double_order  BOOLEAN NOT NULL,
    float_order   BOOLEAN NOT NULL
);

-- Text collections: documents to retrieve and queries, by corpus; ids are the row index in the
-- source file (0-based) unless the format has its own ids.
CREATE TABLE IF NOT EXISTS raw.documents (
    corpus     VARCHAR NOT NULL,
    doc_id     VARCHAR NOT NULL,
    row_index  BIGINT  NOT NULL,  -- position in the source, the stable tie-breaker
    text       VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.queries (
    corpus     VARCHAR NOT NULL,
    qid        VARCHAR NOT NULL,
    row_index  BIGINT  NOT NULL,
    text       VARCHAR NOT NULL
);

-- Sentence vectors (unit length) of documents and queries, and the cache they come from: a text is
-- never encoded twice by the same model.
CREATE TABLE IF NOT EXISTS raw.document_vectors (
    corpus     VARCHAR    NOT NULL,
    doc_id     VARCHAR    NOT NULL,
    vector     FLOAT[384] NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.query_vectors (
    corpus     VARCHAR    NOT NULL,
    qid        VARCHAR    NOT NULL,
    vector     FLOAT[384] NOT NULL
);
CREATE TABLE IF NOT EXISTS raw.vector_cache (
    text_sha256        VARCHAR    NOT NULL,
    model_fingerprint  VARCHAR    NOT NULL,
    vector             FLOAT[384] NOT NULL,
    PRIMARY KEY (text_sha256, model_fingerprint)
);

-- Seeded resample plans (bootstrap): replicate r draws item `item` (0-based position of a unit, e.g.
-- a query in qid order) at draw d. Made once from a recorded seed by rankhouse/resample.py.
CREATE TABLE IF NOT EXISTS raw.resample_plans (
    plan       VARCHAR NOT NULL,
    replicate  INTEGER NOT NULL,
    draw       INTEGER NOT NULL,
    item       INTEGER NOT NULL
);

-- Seeded permutation plans (sign flips, for the paired randomization test): in replicate r the
-- difference of item `item` (0-based position of a unit, e.g. a query in qid order) is multiplied by
-- `sign` (+1 or -1). Made once from a recorded seed by rankhouse/resample.py.
CREATE TABLE IF NOT EXISTS raw.permutation_plans (
    plan       VARCHAR NOT NULL,
    replicate  INTEGER NOT NULL,
    item       INTEGER NOT NULL,
    sign       TINYINT NOT NULL
);

-- Null reference panels (seed 003, cold start): `size` documents drawn at random, without
-- replacement, from a corpus with a recorded seed, before and independently of any retrieval.
CREATE TABLE IF NOT EXISTS raw.null_panels (
    panel     VARCHAR NOT NULL,
    corpus    VARCHAR NOT NULL,
    position  INTEGER NOT NULL,
    doc_row   BIGINT  NOT NULL,
    seed      BIGINT  NOT NULL   -- numpy PCG64 seed of the draw (choice without replacement)
);

-- Which encoder made each corpus's vectors: the model identity that fingerprints need.
CREATE TABLE IF NOT EXISTS raw.vector_models (
    corpus       VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,  -- documents | queries
    model_name   VARCHAR NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    dimension    INTEGER NOT NULL
);
