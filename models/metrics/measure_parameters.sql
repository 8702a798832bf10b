-- name: measure_parameters
-- version: 1
-- stage: evaluate
-- grain: measure, position
-- audits: not_null(measure, position, name, value); unique_grain
-- description: The parameters of each requested measure that has any (measure_requests.parameters,
--   `name=value` items, from the registry rankhouse/measures.py), one row each: position (1-based, in
--   the order written), name and value. RBP's and rbp_resid's persistence `p`, SetF's `beta`, SetP's
--   `relative` (1 or 0), utility's weights `a` to `d` (relevant retrieved, non-relevant retrieved,
--   relevant not retrieved, non-relevant not retrieved), 11pt_avg's recall levels (each `level`), and a
--   gain per grade for nDCG, G, ndcg_rel, Rndcg and RBP (name: the grade). The registry allows at most
--   64 items a measure.
WITH positions AS (
    SELECT position
    FROM (VALUES {% for i in range(1, 65) %}({{ i }}){{ ", " if not loop.last }}{% endfor %}) AS p (position)
),

items AS (
    SELECT m.measure, p.position, split_part(m.parameters, ',', p.position) AS item
    FROM models.measure_requests AS m
    JOIN positions AS p
        ON p.position <= length(m.parameters) - length(replace(m.parameters, ',', '')) + 1
    WHERE m.parameters IS NOT NULL
)

SELECT
    measure,
    position,
    split_part(item, '=', 1) AS name,
    CAST(split_part(item, '=', 2) AS DOUBLE) AS value
FROM items
