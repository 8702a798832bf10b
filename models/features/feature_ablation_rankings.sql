-- name: feature_ablation_rankings
-- version: 1
-- stage: prepare
-- grain: system, corpus, query_key, rank
-- audits: not_null(system, corpus, query_key, doc_key, rank, score); unique_grain; accepted_range(rank, 1, )
-- parameters: corpus = "banking77", ablation_depth = 10
-- dialect: duckdb: list lambdas, struct keys and max_by with a count (Spark SQL has no top-n aggregate)
-- description: Seed 004 E5's ablation rankings, in the rankings shape: for each variant of
--   feature_ablation_variants (system = its name) and query, weighted relevance with the removed
--   feature(s) dropped from numerator and denominator (their query values set to 0) and every other
--   weight kept as it is (feature_weights, the full system's global weights; the stored extractions,
--   never extracted again). Only the first ablation_depth (10) documents per variant and query, by
--   the exact numerator descending and the document's row ascending (the E2 tie rule): these are the
--   first 10 of the full ranking, exactly, so Top-1 and Hit@5, the only measures E5 reports
--   (feature_ablations), are what the full ranking gives. Measures that look below the depth (RR over
--   the whole ranking, R@k for k > 10) are not valid for these systems and are never reported.
--   max_by with a count, not QUALIFY row_number() <= 10: the same rows, several times faster, where
--   QUALIFY over all 38 variants ran out of memory and disk on BANKING77 (docs/performance.md).
WITH weights AS (
    SELECT list(weight ORDER BY position) AS weights FROM models.feature_weights
),

-- per variant, 1 for each kept feature and 0 for each removed one, in schema order
variant_masks AS (
    SELECT
        a.variant,
        list(
            CASE WHEN (a.kind = 'feature' AND s.feature = a.removed) OR (a.kind = 'family' AND s.family = a.removed)
                THEN 0 ELSE 1 END
            ORDER BY s.position
        ) AS kept
    FROM models.feature_ablation_variants AS a
    CROSS JOIN models.feature_schema AS s
    GROUP BY a.variant
),

variant_terms AS (
    SELECT
        m.variant,
        q.query_row,
        {{ weighted_terms('list_transform(list_zip(q.feature_units, m.kept), lambda pair: pair[1] * pair[2])', 'w.weights') }}
            AS terms
    FROM models.query_features AS q
    CROSS JOIN variant_masks AS m
    CROSS JOIN weights AS w
    WHERE q.corpus = {{ corpus | literal }}
),

variant_queries AS (
    SELECT variant, query_row, CAST(terms AS DOUBLE[]) AS terms, list_sum(terms) AS denominator
    FROM variant_terms
),

documents AS (
    {{ feature_lists('document_features', 'doc_row', corpus) | indent(4) }}
),

numerators AS (
    SELECT q.variant, q.query_row, q.denominator, d.doc_row, {{ weighted_numerator('q.terms', 'd.units') }} AS numerator
    FROM variant_queries AS q
    CROSS JOIN documents AS d
),

-- the first documents by the total order (numerator descending, row ascending): max_by over the
-- struct (numerator, -row), compared field by field
firsts AS (
    SELECT
        variant,
        query_row,
        max(denominator) AS denominator,
        max_by({'doc_row': doc_row, 'numerator': numerator}, {'numerator': numerator, 'row': -doc_row}, {{ ablation_depth }})
            AS documents
    FROM numerators
    GROUP BY variant, query_row
),

listed AS (
    SELECT variant, query_row, denominator, unnest(documents) AS document
    FROM firsts
)

SELECT
    variant AS system,
    {{ corpus | literal }} AS corpus,
    query_row AS query_key,
    document.doc_row AS doc_key,
    row_number() OVER (PARTITION BY variant, query_row ORDER BY {{ seed_order('document.numerator', 'document.doc_row') }}) AS rank,
    {{ weighted_relevance('document.numerator', 'denominator') }} AS score
FROM listed
