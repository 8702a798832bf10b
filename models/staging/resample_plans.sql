-- name: resample_plans
-- version: 1
-- stage: prepare
-- grain: plan, replicate, draw
-- audits:
-- materialized: view
-- description: Seeded bootstrap plans (raw.resample_plans): replicate r draws unit position `item` at draw d.
SELECT plan, replicate, draw, item
FROM raw.resample_plans
