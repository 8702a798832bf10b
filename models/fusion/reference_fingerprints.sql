-- name: reference_fingerprints
-- version: 2
-- stage: prepare
-- grain: arm, corpus
-- audits: not_null(arm, corpus, scorer, tokenizer, panel, panel_seed, panel_size, reference_size, fingerprint); unique_grain; at_least_one_row
-- parameters: corpus = "banking77", reference_panel = "null_panel", k1 = 1.2, b = 0.75
-- description: The identity card of each arm's frozen null reference (seed 003, section 10): the
--   scorer and its revision, dimension, tokeniser, BM25 parameters, corpus size, panel, seed, sizes,
--   tail convention and version, and a SHA-256 over all of them. The panel's ids and the corpus files'
--   SHA-256 are in the freeze that holds this table.
WITH panel AS (
    SELECT panel, corpus, min(seed) AS panel_seed, count(*) AS panel_size
    FROM models.null_panels
    WHERE panel = {{ reference_panel | literal }} AND corpus = {{ corpus | literal }}
    GROUP BY panel, corpus
),

encoder AS (
    SELECT model_name, fingerprint AS encoder_fingerprint, dimension
    FROM models.vector_models
    WHERE corpus = {{ corpus | literal }} AND kind = 'documents'
),

sizes AS (
    SELECT arm, min(reference_size) AS reference_size
    FROM models.arm_p_values
    GROUP BY arm
),

scorers AS (
    SELECT
        'bm25' AS arm,
        'bm25 (seed 004): idf ln(1 + (N - df + 0.5)/(df + 0.5)), k1 = ' || CAST({{ k1 }} AS VARCHAR)
            || ', b = ' || CAST({{ b }} AS VARCHAR) AS scorer,
        CAST(NULL AS INTEGER) AS dimension,
        'lowercase Unicode letter/number runs, no stemming, no stop words' AS tokenizer
    UNION ALL
    SELECT
        'dense',
        'cosine of ' || e.model_name || ' fp32 mean-pooled unit vectors, encoder ' || e.encoder_fingerprint,
        e.dimension,
        'wordpiece (the model''s tokenizer.json), at most 256 pieces'
    FROM encoder AS e
),

cards AS (
    SELECT
        s.arm,
        p.corpus,
        s.scorer,
        s.dimension,
        s.tokenizer,
        (SELECT count(*) FROM models.documents WHERE corpus = {{ corpus | literal }}) AS corpus_documents,
        p.panel,
        p.panel_seed,
        p.panel_size,
        z.reference_size,
        'inclusive exceedance (1 + #{reference >= s}) / (m + 1), no clipping' AS tail_convention,
        'rankhouse fusion models version 1' AS version
    FROM scorers AS s
    CROSS JOIN panel AS p
    JOIN sizes AS z ON z.arm = s.arm
)

SELECT
    *,
    sha256(concat_ws('|', arm, corpus, scorer, coalesce(CAST(dimension AS VARCHAR), ''), tokenizer,
        CAST(corpus_documents AS VARCHAR), panel, CAST(panel_seed AS VARCHAR), CAST(panel_size AS VARCHAR),
        CAST(reference_size AS VARCHAR), tail_convention, version)) AS fingerprint
FROM cards
