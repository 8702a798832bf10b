-- name: measure_requests
-- version: 1
-- stage: prepare
-- grain: measure
-- audits: not_null(measure, family); unique_grain; at_least_one_row
-- parameters: measures = ["AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec", "Bpref", "Success@10", "NumRet", "NumRel", "NumRelRet", "NumQ"]
-- description: The measures to compute, in canonical `Family@cutoff` form, split into family and
--   cutoff. Measure models compute only the rows requested here.
WITH requested AS (
    SELECT *
    FROM (VALUES
        {%- for measure in measures %}
        ({{ loop.index }}, {{ measure | literal }}){{ "," if not loop.last }}
        {%- endfor %}
    ) AS requested (position, measure)
)
SELECT
    position,
    measure,
    split_part(measure, '@', 1) AS family,
    TRY_CAST(NULLIF(split_part(measure, '@', 2), '') AS DOUBLE) AS cutoff
FROM requested
