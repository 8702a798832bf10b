-- name: calibration_scores
-- version: 1
-- stage: evaluate
-- holds: labels
-- grain: arm, corpus, query_row, doc_row
-- audits: not_null(arm, corpus, query_row, doc_row, block, held_out, relevant, lexical_match, document_length_bin, calibration_position, score, panel_p, panel_floor); accepted_range(panel_p, 0, 1); accepted_range(pooled_p, 0, 1); at_least_one_row
-- parameters: corpus = "banking77", reference_panel = "null_panel", calibration_panel = "calibration_order", calibration_size = 1000, pooled_panel_size = 100, kappa = 0.0, beta = 0.5
-- columns: block = "The query's held-out block (fusion_query_groups)", held_out = "Whether the document is in
--   the held-out calibration sample: the first calibration_size documents of the seeded calibration order
--   that are not in the reference panel", lexical_match = "Whether BM25 scores the pair above 0 (a lexical
--   match); a non-match is an observation of the lexical null too", document_length_bin = "short, medium
--   or long: the document's length in terms against the corpus's tertiles", calibration_position = "The
--   document's position in the seeded calibration order", panel_p = "Eq. 1's p-value against the study's
--   frozen reference: the query's scores of the random panel (for arm mixture: min(1, 1/E), eq. 12)",
--   panel_floor = "Whether panel_p is at its floor 1/(m + 1) (for the mixture: in every arm)", pooled_p =
--   "Eq. 1's p-value against the retained real queries of the other blocks: every other-block query's
--   scores of the first pooled_panel_size panel documents pooled, a query-unconditional reference held out
--   by block (NULL for the mixture)",
--   pooled_floor = "Whether pooled_p is at its floor (NULL for the mixture)"
-- description: The scores section 9 of seed 003 calibrates (evaluate: relevance is read through the gate),
--   per arm (bm25, dense, and the mixture's combined p-value) for every query and (a) the held-out null
--   sample: the first calibration_size documents of a seeded order of the corpus outside the reference
--   panel, the same documents for every query, drawn before any retrieval and independently of the
--   candidates (relevant ones among them are kept and marked: the null rows are the non-relevant ones,
--   lexical non-matches included), and (b) every relevant document of the query (gold). Each score gets
--   eq. 1's p-value against two references: the study's frozen one (the query against the random panel,
--   section 6's cold start) and the retained real queries of the other blocks (every other-block
--   query's panel scores pooled; held out by query block, never by pair). The mixture's rows combine the
--   arms' p-values against the frozen reference by eq. 7-11 and 12 (kappa, beta of the study), the
--   deployed rule's combined p-value.
WITH blocks AS (
    SELECT query_row, block
    FROM models.fusion_query_groups
),

reference_panel AS (
    SELECT doc_row
    FROM models.null_panels
    WHERE panel = {{ reference_panel | literal }} AND corpus = {{ corpus | literal }}
),

calibration_order AS (
    SELECT doc_row, position
    FROM models.null_panels
    WHERE panel = {{ calibration_panel | literal }} AND corpus = {{ corpus | literal }}
),

held_out AS (
    SELECT doc_row
    FROM (
        SELECT o.doc_row, row_number() OVER (ORDER BY o.position) AS taken
        FROM calibration_order AS o
        WHERE NOT EXISTS (SELECT 1 FROM reference_panel AS r WHERE r.doc_row = o.doc_row)
    ) AS outside_the_panel
    WHERE taken <= {{ calibration_size }}
),

relevant AS (
    SELECT DISTINCT query_key AS query_row, doc_key AS doc_row
    FROM models.judgments
    WHERE grade > 0
),

tested AS (
    SELECT a.arm, a.corpus, a.query_row, a.doc_row, a.score, h.doc_row IS NOT NULL AS held_out, r.doc_row IS NOT NULL AS relevant
    FROM models.fusion_arms AS a
    LEFT JOIN held_out AS h ON h.doc_row = a.doc_row
    LEFT JOIN relevant AS r ON r.query_row = a.query_row AND r.doc_row = a.doc_row
    WHERE h.doc_row IS NOT NULL OR r.doc_row IS NOT NULL
),

panel_sizes AS (
    SELECT arm, corpus, query_row, count(*) AS reference_size
    FROM models.null_references
    GROUP BY arm, corpus, query_row
),

panel_p_values AS (
    {{ exceedance_p_values('models.null_references', 'tested', ['arm', 'corpus', 'query_row'], [('doc_row', 'BIGINT')], 'panel_sizes', 'panel_') | indent(4) }}
),

-- The retained real queries' reference: each query's scores of the first pooled_panel_size panel
-- documents (in the panel's drawn order), pooled over the queries of the other blocks.
references_by_block AS (
    SELECT n.arm, n.corpus, b.block, n.score
    FROM models.null_references AS n
    JOIN blocks AS b ON b.query_row = n.query_row
    JOIN models.null_panels AS s
        ON s.panel = {{ reference_panel | literal }} AND s.corpus = n.corpus AND s.doc_row = n.doc_row
    WHERE s.position < {{ pooled_panel_size }}
),

tested_by_block AS (
    SELECT t.arm, t.corpus, b.block, t.query_row, t.doc_row, t.score
    FROM tested AS t
    JOIN blocks AS b ON b.query_row = t.query_row
),

every_block_sizes AS (
    SELECT arm, corpus, count(*) AS reference_size
    FROM references_by_block
    GROUP BY arm, corpus
),

own_block_sizes AS (
    SELECT arm, corpus, block, count(*) AS reference_size
    FROM references_by_block
    GROUP BY arm, corpus, block
),

-- The other blocks' count is every block's minus the query's own block's.
every_block AS (
    {{ exceedance_p_values('references_by_block', 'tested_by_block', ['arm', 'corpus'], [('query_row', 'BIGINT'), ('doc_row', 'BIGINT')], 'every_block_sizes', 'every_') | indent(4) }}
),

own_block AS (
    {{ exceedance_p_values('references_by_block', 'tested_by_block', ['arm', 'corpus', 'block'], [('query_row', 'BIGINT'), ('doc_row', 'BIGINT')], 'own_block_sizes', 'own_') | indent(4) }}
),

arm_rows AS (
    SELECT
        p.arm,
        p.corpus,
        p.query_row,
        p.doc_row,
        p.score,
        p.p AS panel_p,
        p.exceedances = 1 AS panel_floor,
        (e.exceedances - o.exceedances + 1) / (e.reference_size - o.reference_size + 1) AS pooled_p,
        e.exceedances - o.exceedances = 0 AS pooled_floor
    FROM panel_p_values AS p
    JOIN every_block AS e ON e.arm = p.arm AND e.corpus = p.corpus AND e.query_row = p.query_row AND e.doc_row = p.doc_row
    JOIN own_block AS o ON o.arm = p.arm AND o.corpus = p.corpus AND o.query_row = p.query_row AND o.doc_row = p.doc_row
),

configured AS (
    SELECT count(DISTINCT arm) AS arms
    FROM models.fusion_candidates
),

mixture_inputs AS (
    SELECT a.corpus, a.query_row, a.doc_row, a.panel_p AS p, c.arms
    FROM arm_rows AS a
    CROSS JOIN configured AS c
),

{{ mixture_scores('mixture', 'mixture_inputs', ['corpus', 'query_row', 'doc_row'], kappa, beta) }},

-- The combined p-value of the deployed rule: the mixture over the frozen (panel) reference's p-values.
mixture_rows AS (
    SELECT
        'mixture' AS arm,
        m.corpus,
        m.query_row,
        m.doc_row,
        m.score,
        least(1, exp(-m.score)) AS panel_p,
        f.panel_floor,
        CAST(NULL AS DOUBLE) AS pooled_p,
        CAST(NULL AS BOOLEAN) AS pooled_floor
    FROM mixture AS m
    JOIN (
        SELECT corpus, query_row, doc_row, bool_and(panel_floor) AS panel_floor
        FROM arm_rows
        GROUP BY corpus, query_row, doc_row
    ) AS f ON f.corpus = m.corpus AND f.query_row = m.query_row AND f.doc_row = m.doc_row
),

document_lengths AS (
    SELECT d.doc_row, coalesce(max(t.length), 0) AS length
    FROM models.documents AS d
    LEFT JOIN models.document_tokens AS t ON t.corpus = d.corpus AND t.doc_row = d.doc_row
    WHERE d.corpus = {{ corpus | literal }}
    GROUP BY d.doc_row
),

{{ tertile_edges('length_edges', 'document_lengths', 'length', 'doc_row') }},

pairs AS (
    SELECT
        t.corpus,
        t.query_row,
        t.doc_row,
        t.held_out,
        t.relevant,
        t.score > 0 AS lexical_match,
        {{ tertile_bin('l.length', 'e') }} AS document_length_bin,
        o.position AS calibration_position
    FROM tested AS t
    JOIN document_lengths AS l ON l.doc_row = t.doc_row
    JOIN calibration_order AS o ON o.doc_row = t.doc_row
    CROSS JOIN length_edges AS e
    WHERE t.arm = 'bm25'
),

scored AS (
    SELECT * FROM arm_rows
    UNION ALL
    SELECT * FROM mixture_rows
)

SELECT
    s.arm,
    s.corpus,
    s.query_row,
    s.doc_row,
    b.block,
    p.held_out,
    p.relevant,
    p.lexical_match,
    p.document_length_bin,
    p.calibration_position,
    s.score,
    s.panel_p,
    s.panel_floor,
    s.pooled_p,
    s.pooled_floor
FROM scored AS s
JOIN pairs AS p ON p.corpus = s.corpus AND p.query_row = s.query_row AND p.doc_row = s.doc_row
JOIN blocks AS b ON b.query_row = s.query_row
