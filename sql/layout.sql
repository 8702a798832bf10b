-- What a file of a warehouse is (rankhouse/warehouse/layout.py), in every one of them: its kind
-- ('warehouse' for the inputs file, 'namespace', 'store' or 'labels'), the layout version, the
-- warehouse it belongs to and, for a namespace or labels file, its study. Run before each kind's own DDL
-- (warehouse.sql, namespace.sql, labels.sql; a store file has no other).
CREATE SCHEMA IF NOT EXISTS meta;

CREATE TABLE IF NOT EXISTS meta.layout (
    kind          VARCHAR   NOT NULL,
    version       INTEGER   NOT NULL,
    warehouse_id  VARCHAR   NOT NULL,
    namespace     VARCHAR,
    created_at    TIMESTAMP NOT NULL
);
