-- name: reference_fingerprints
-- version: 3
-- stage: prepare
-- grain: arm, corpus
-- audits: not_null(arm, corpus, scorer, tokenizer, panel, panel_seed, panel_size, reference_size, combiner, arm_applicability, depth_contract, tie_policy, schema_version, fingerprint); unique_grain; at_least_one_row
-- parameters: corpus = "banking77", reference_panel = "null_panel", k1 = 1.2, b = 0.75, kappa = 0.0, beta = 0.5, rrf_k = 60, stouffer_bm25_weight = 1.0, stouffer_dense_weight = 1.0, candidate_depth = 100, fusion_rules = ["rrf", "rsf", "mixture", "fisher", "stouffer"]
-- columns: combiner = "The fusion rules that read this reference, with their parameters (section 10: combiner
--   parameters)", arm_applicability = "Which arms score which row types (fixed by configuration, never by the
--   lists that returned a row)", depth_contract = "The candidate-depth contract: which documents are scored
--   by every arm", tie_policy = "The total order of a fused ranking (section 8)", schema_version = "The
--   version of this identity card's layout and of the models that make the reference"
-- description: The identity card of each arm's frozen null reference (seed 003, section 10): the
--   scorer and its revision, dimension, tokeniser, BM25 parameters, corpus size, panel, seed, sizes,
--   tail convention and version; section 10's combiner parameters, arm applicability, candidate-depth
--   contract, tie policy and schema version; and a SHA-256 over all of them. The panel's ids and the
--   corpus files' SHA-256 are in the freeze that holds this table, and so is the timestamp: a model
--   that read a clock would not rebuild to the same rows, so the freeze's creation time is the
--   reference's (the writer shows it beside the cards: results.json reference.frozen_at, and the report).
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
        'rankhouse fusion models version 1' AS version,
        'rules ' || {% for rule in fusion_rules %}{{ rule | literal }}{{ " || ', ' || " if not loop.last }}{% endfor %}
            || '; mixture kappa = ' || CAST({{ kappa }} AS VARCHAR) || ', beta = ' || CAST({{ beta }} AS VARCHAR)
            || ', equal pi over the arms; fisher equal alpha; stouffer on mid-p, weights bm25 '
            || CAST({{ stouffer_bm25_weight }} AS VARCHAR) || ', dense ' || CAST({{ stouffer_dense_weight }} AS VARCHAR)
            || '; rrf k = ' || CAST({{ rrf_k }} AS VARCHAR) AS combiner,
        'bm25 and dense on every row of the one row type (document)' AS arm_applicability,
        'the union of each arm''s first ' || CAST({{ candidate_depth }} AS VARCHAR)
            || ', every arm scored on every candidate (missing is not non-matching)' AS depth_contract,
        '(-S, -s_dense NULLS LAST, row_type, doc_row)' AS tie_policy,
        'reference_fingerprints 3 (null_references 5, arm_p_values 2)' AS schema_version
    FROM scorers AS s
    CROSS JOIN panel AS p
    JOIN sizes AS z ON z.arm = s.arm
)

SELECT
    *,
    sha256(concat_ws('|', arm, corpus, scorer, coalesce(CAST(dimension AS VARCHAR), ''), tokenizer,
        CAST(corpus_documents AS VARCHAR), panel, CAST(panel_seed AS VARCHAR), CAST(panel_size AS VARCHAR),
        CAST(reference_size AS VARCHAR), tail_convention, version, combiner, arm_applicability, depth_contract,
        tie_policy, schema_version)) AS fingerprint
FROM cards
