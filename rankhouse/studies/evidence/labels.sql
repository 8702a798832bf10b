-- The evidence study's tables in each study's labels file (read by models as gate.<name>; run after
-- sql/labels.sql: rankhouse/registry.py Tables). Evidence bundles' judgments (judgments.jsonl;
-- loaders.py): one row per judge's judgment of a pooled (task, document) pair, and one row per
-- obligation, i.e. per requirement that the judge says the document satisfies. Obligations are rows, not an INTEGER[] column, so that
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
