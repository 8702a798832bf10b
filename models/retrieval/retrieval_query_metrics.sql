-- name: retrieval_query_metrics
-- version: 2
-- stage: evaluate
-- grain: method, corpus, query_row
-- audits: not_null(method, corpus, query_row, qid, class, relevant, top1, hit5, recall5, rr, ndcg10, p5); unique_grain
-- parameters: corpus = "banking77"
-- description: The retrieval study's measures per method and query side by side (per_query.csv), from
--   the long form (query_measures): top1 = Top-1 (P@1), hit5 = Hit@5 (Success@5: a relevant document
--   in the first five, not recall), recall5 = R@5 (true recall), rr = RR over the full ranking,
--   ndcg10 = nDCG@10 (binary: every judgment has grade 1), p5 = P@5; relevant = the query's relevant
--   documents; class = its intent.
WITH pivoted AS (
    {{ measures_by_query({"top1": "Top-1", "hit5": "Hit@5", "recall5": "R@5", "rr": "RR", "ndcg10": "nDCG@10", "p5": "P@5"}) | indent(4) }}
)

SELECT
    p.system AS method,
    q.corpus,
    q.query_row,
    q.qid,
    c.class,
    e.num_rel AS relevant,
    CAST(p.top1 AS INTEGER) AS top1,
    CAST(p.hit5 AS INTEGER) AS hit5,
    p.recall5,
    p.rr,
    p.ndcg10,
    p.p5
FROM pivoted AS p
JOIN models.evaluated_queries AS e ON e.system = p.system AND e.query = p.query
JOIN models.queries AS q ON q.corpus = {{ corpus | literal }} AND q.qid = p.query
JOIN models.query_classes AS c ON c.corpus = q.corpus AND c.qid = q.qid
