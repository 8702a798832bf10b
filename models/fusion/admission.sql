-- name: admission
-- version: 1
-- stage: prepare
-- grain: corpus, query_row, doc_row
-- audits: not_null(corpus, query_row, doc_row, combined_p, alpha, admitted, fallback); unique_grain; accepted_range(combined_p, 0, 1)
-- parameters: alpha0 = 0.05, eta = 0.05, reserve_depth = 10
-- description: Admission by the mixture's combined p-value (seed 003, eq. 12: p = min(1, 1/E), E =
--   exp(S)) at the starvation-bounded level alpha(n) = max(alpha0, 1 - eta^(1/n)) for a query with n
--   candidates (eq. 27: an all-null query then admits nothing with probability at most eta). The
--   first reserve_depth dense rows that fail it are kept as fallback candidates (section 7), marked
--   as such: retention is not a claim of relevance. A diagnostic; rankings do not filter on it.
WITH sized AS (
    SELECT
        m.corpus,
        m.query_row,
        m.doc_row,
        least(1, exp(-m.score)) AS combined_p,
        greatest({{ alpha0 }}, 1 - pow({{ eta }}, 1 / count(*) OVER (PARTITION BY m.corpus, m.query_row))) AS alpha
    FROM models.fusion_mixture AS m
)

SELECT
    s.corpus,
    s.query_row,
    s.doc_row,
    s.combined_p,
    s.alpha,
    s.combined_p <= s.alpha AS admitted,
    s.combined_p > s.alpha AND c.rank <= {{ reserve_depth }} AS fallback
FROM sized AS s
JOIN models.fusion_candidates AS c
    ON c.arm = 'dense' AND c.corpus = s.corpus AND c.query_row = s.query_row AND c.doc_row = s.doc_row
