-- name: relevance_joint
-- version: 1
-- stage: evaluate
-- grain: relevant, bm25_bin, dense_bin
-- audits: not_null(relevant, bm25_bin, dense_bin, bm25_order, dense_order, candidates, share, queries); unique_grain; accepted_range(share, 0, 1); at_least_one_row
-- columns: bm25_bin = "The BM25 p-value's bin: floor (1/(m + 1)), <=0.01, <=0.05, <=0.1, <=0.5, <=1 (each
--   above the one before)", dense_bin = "The dense p-value's bin, as bm25_bin", bm25_order = "The BM25
--   bin's position, 0 (floor) to 5", dense_order = "The dense bin's position, 0 to 5", share = "The
--   cell's candidates over all candidates of the class (relevant or not)"
-- description: The labelled joint distribution of the two arms' p-values (seed 003, section 9: the
--   relevance model): every complete candidate of every judged query in a cell of (BM25 p bin, dense p
--   bin), separately for relevant and non-relevant candidates, with the cell's share of its class and the
--   queries it comes from. The bins (floor, 0.01, 0.05, 0.1, 0.5, 1) are the calibration levels and the
--   floor 1/(m + 1), fixed before any result. The seed's gate reads it: relevant candidates concentrated
--   where only one arm is extreme, or non-relevant ones at an extreme lexical p (rare lexical distractors),
--   refute the single-coordinate tilt of eq. 8.
WITH relevant AS (
    SELECT DISTINCT query_key AS query_row, doc_key AS doc_row
    FROM models.judgments
    WHERE grade > 0
),

binned AS (
    SELECT
        p.arm,
        p.query_row,
        p.doc_row,
        CASE
            WHEN p.exceedances = 1 THEN 0
            WHEN p.p <= 0.01 THEN 1
            WHEN p.p <= 0.05 THEN 2
            WHEN p.p <= 0.1 THEN 3
            WHEN p.p <= 0.5 THEN 4
            ELSE 5
        END AS bin
    FROM models.arm_p_values AS p
    JOIN models.candidate_completeness AS c
        ON c.corpus = p.corpus AND c.query_row = p.query_row AND c.doc_row = p.doc_row
    WHERE c.complete AND p.query_row IN (SELECT query_key FROM models.judgments)
),

paired AS (
    SELECT
        b.query_row,
        b.doc_row,
        b.bin AS bm25_order,
        d.bin AS dense_order,
        r.doc_row IS NOT NULL AS relevant
    FROM binned AS b
    JOIN binned AS d ON d.arm = 'dense' AND d.query_row = b.query_row AND d.doc_row = b.doc_row
    LEFT JOIN relevant AS r ON r.query_row = b.query_row AND r.doc_row = b.doc_row
    WHERE b.arm = 'bm25'
),

cells AS (
    SELECT relevant, bm25_order, dense_order, count(*) AS candidates, count(DISTINCT query_row) AS queries
    FROM paired
    GROUP BY relevant, bm25_order, dense_order
)

SELECT
    relevant,
    CASE bm25_order WHEN 0 THEN 'floor' WHEN 1 THEN '<=0.01' WHEN 2 THEN '<=0.05' WHEN 3 THEN '<=0.1' WHEN 4 THEN '<=0.5' ELSE '<=1' END AS bm25_bin,
    CASE dense_order WHEN 0 THEN 'floor' WHEN 1 THEN '<=0.01' WHEN 2 THEN '<=0.05' WHEN 3 THEN '<=0.1' WHEN 4 THEN '<=0.5' ELSE '<=1' END AS dense_bin,
    bm25_order,
    dense_order,
    candidates,
    candidates / sum(candidates) OVER (PARTITION BY relevant) AS share,
    queries
FROM cells
