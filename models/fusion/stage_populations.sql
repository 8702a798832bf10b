-- name: stage_populations
-- version: 1
-- stage: evaluate
-- grain: corpus, query_row
-- audits: not_null(corpus, query_row, eligible, bm25_scored, dense_scored, bm25_reference, dense_reference, reference_outside_corpus, candidates, complete, admitted, fallback, retained); unique_grain; at_least_one_row
-- parameters: corpus = "banking77", reference_panel = "null_panel"
-- columns: eligible = "The corpus's documents: the eligible candidate universe", bm25_scored = "Documents the
--   BM25 arm scored for the query (its full ranking)", dense_scored = "Documents the dense arm scored",
--   bm25_reference = "Reference (panel) scores of the BM25 arm for the query", dense_reference = "Reference
--   scores of the dense arm", reference_outside_corpus = "Panel documents that are not corpus documents (0:
--   the null instrument scores the same population)", complete = "Candidates every arm scored",
--   admitted = "Candidates admitted at eq. 27's level", fallback = "Dense top rows kept as fallback
--   candidates", retained = "Candidates after admission (admitted or fallback)"
-- description: The measured pipeline and its candidate population per query (seed 003, section 9's first
--   step: no loss is attributed to fusion until the stages and populations agree): the eligible corpus, the
--   documents each arm scored, the null reference's size per arm and whether its documents are corpus
--   documents, the candidate union, the complete candidates, and what admission admitted and kept as
--   fallback. Label-free (an evaluate model beside the stage measurements it documents).
WITH eligible AS (
    SELECT count(*) AS documents
    FROM models.documents
    WHERE corpus = {{ corpus | literal }}
),

scored AS (
    SELECT
        query_row,
        count(*) FILTER (WHERE arm = 'bm25') AS bm25_scored,
        count(*) FILTER (WHERE arm = 'dense') AS dense_scored
    FROM models.fusion_arms
    GROUP BY query_row
),

reference AS (
    SELECT
        query_row,
        count(*) FILTER (WHERE arm = 'bm25') AS bm25_reference,
        count(*) FILTER (WHERE arm = 'dense') AS dense_reference
    FROM models.null_references
    GROUP BY query_row
),

outside AS (
    SELECT count(*) AS documents
    FROM models.null_panels AS p
    WHERE p.panel = {{ reference_panel | literal }} AND p.corpus = {{ corpus | literal }}
        AND NOT EXISTS (SELECT 1 FROM models.documents AS d WHERE d.corpus = p.corpus AND d.doc_row = p.doc_row)
),

candidates AS (
    SELECT query_row, count(*) AS candidates, count(*) FILTER (WHERE complete) AS complete
    FROM models.candidate_completeness
    GROUP BY query_row
),

admitted AS (
    SELECT
        query_row,
        count(*) FILTER (WHERE admitted) AS admitted,
        count(*) FILTER (WHERE fallback) AS fallback,
        count(*) FILTER (WHERE admitted OR fallback) AS retained
    FROM models.admission
    GROUP BY query_row
)

SELECT
    {{ corpus | literal }} AS corpus,
    s.query_row,
    e.documents AS eligible,
    s.bm25_scored,
    s.dense_scored,
    coalesce(r.bm25_reference, 0) AS bm25_reference,
    coalesce(r.dense_reference, 0) AS dense_reference,
    o.documents AS reference_outside_corpus,
    coalesce(c.candidates, 0) AS candidates,
    coalesce(c.complete, 0) AS complete,
    coalesce(a.admitted, 0) AS admitted,
    coalesce(a.fallback, 0) AS fallback,
    coalesce(a.retained, 0) AS retained
FROM scored AS s
CROSS JOIN eligible AS e
CROSS JOIN outside AS o
LEFT JOIN reference AS r ON r.query_row = s.query_row
LEFT JOIN candidates AS c ON c.query_row = s.query_row
LEFT JOIN admitted AS a ON a.query_row = s.query_row
