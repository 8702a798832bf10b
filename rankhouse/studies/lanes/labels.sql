-- The lanes study's table in each study's labels file (read by models as gate.topic_classes; run after
-- sql/labels.sql: rankhouse/registry.py Tables): the classes a topic maps to (a BANKING77 semantic
-- group's intents), so that a document of one of those classes (document_classes) is relevant to the topic.
CREATE TABLE IF NOT EXISTS topic_classes (
    corpus  VARCHAR NOT NULL,
    topic   VARCHAR NOT NULL,
    class   VARCHAR NOT NULL
);
