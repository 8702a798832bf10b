-- The lanes study's tables in the warehouse's inputs file (seed 002; its loaders.py and passages.py,
-- models/lanes/; run after sql/warehouse.sql: rankhouse/registry.py Tables): topics with their untouched
-- narrative and subnarratives (semantic units), lane runs that users bring, and the passage scores of
-- rescoring.
-- Each unit is also a query of the corpus in raw.queries (qid `<topic>/<unit>`), so that the BM25
-- models can build lanes from it.
CREATE TABLE IF NOT EXISTS raw.lane_units (
    corpus     VARCHAR NOT NULL,  -- the document corpus the topics are searched in (the name loaded under)
    topic      VARCHAR NOT NULL,
    topic_row  BIGINT  NOT NULL,  -- position of the topic in its file (0-based)
    unit       VARCHAR NOT NULL,  -- 'narrative' or 'facet:<subnarrative name>'
    unit_row   INTEGER NOT NULL,  -- 0 for the narrative, then 1, 2, ... for the subnarratives in file order
    text       VARCHAR NOT NULL,  -- untouched
    qid        VARCHAR NOT NULL   -- the unit as a query of the corpus: '<topic>/<unit>'
);
-- Lane runs (TREC files whose tag is the lane id: `narrative` or `facet:<subnarrative>`), by lane set.
CREATE TABLE IF NOT EXISTS raw.lane_runs (
    lane_set     VARCHAR NOT NULL,  -- the name the file was loaded under
    topic        VARCHAR NOT NULL,
    lane         VARCHAR NOT NULL,
    docno        VARCHAR NOT NULL,
    source_rank  BIGINT  NOT NULL,  -- the rank field: the document's rank in the source retrieval
    score        DOUBLE  NOT NULL,  -- the lane's aggregate score A_u(d)
    line         BIGINT  NOT NULL
);
-- The passage-score cache that rescoring reads first: files users bring (scorer = the name loaded
-- under, `line` set, hashes NULL: trusted as given) and the scores a scorer computed on a miss
-- (`line` NULL, with the SHA-256 of both texts and the scorer's fingerprint, so that a changed text or
-- model is a miss). Not read by models: the scores a study used are copied to raw.passage_scores.
CREATE TABLE IF NOT EXISTS raw.passage_score_cache (
    scorer             VARCHAR NOT NULL,
    topic              VARCHAR NOT NULL,
    unit               VARCHAR NOT NULL,
    doc_id             VARCHAR NOT NULL,
    chunk              INTEGER NOT NULL,  -- 0-based chunk of the document (models/lanes/lane_chunks.sql)
    score              DOUBLE  NOT NULL,
    unit_sha256        VARCHAR,
    chunk_sha256       VARCHAR,
    model_fingerprint  VARCHAR,
    line               BIGINT
);
-- The passage scores of one corpus's candidates (every chunk against every unit of the topic).
CREATE TABLE IF NOT EXISTS raw.passage_scores (
    corpus  VARCHAR NOT NULL,
    topic   VARCHAR NOT NULL,
    unit    VARCHAR NOT NULL,
    doc_id  VARCHAR NOT NULL,
    chunk   INTEGER NOT NULL,
    score   DOUBLE  NOT NULL
);

-- Receipts of passage scoring (the seed's "cached scores, cache misses, model batches"): one row per
-- scoring and topic, and one per scoring. Bookkeeping, not read by models (a replay has other counts).
CREATE TABLE IF NOT EXISTS meta.passage_score_receipts (
    corpus        VARCHAR   NOT NULL,
    topic         VARCHAR   NOT NULL,
    scorer        VARCHAR   NOT NULL,
    requested     BIGINT    NOT NULL,
    cache_hits    BIGINT    NOT NULL,
    cache_misses  BIGINT    NOT NULL,
    scored_at     TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS meta.passage_scorings (
    corpus             VARCHAR   NOT NULL,
    scorer             VARCHAR   NOT NULL,
    model_fingerprint  VARCHAR,
    requested          BIGINT    NOT NULL,
    cache_hits         BIGINT    NOT NULL,
    cache_misses       BIGINT    NOT NULL,
    texts_encoded      BIGINT    NOT NULL,  -- texts the scorer's model had to run on (0: all from its caches)
    model_batches      BIGINT    NOT NULL,
    seconds            DOUBLE    NOT NULL,
    scored_at          TIMESTAMP NOT NULL
);
