-- name: permutation_plans
-- version: 1
-- stage: prepare
-- grain: plan, replicate, item
-- audits:
-- materialized: view
-- description: Seeded sign-flip plans (raw.permutation_plans): in replicate r, the paired difference of
--   unit position `item` is multiplied by `sign` (+1 or -1).
SELECT plan, replicate, item, sign
FROM raw.permutation_plans
