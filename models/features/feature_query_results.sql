-- name: feature_query_results
-- version: 1
-- stage: evaluate
-- grain: method, corpus, query_row
-- audits: not_null(method, corpus, query_row, qid, intent, top1_doc_row, top1_doc_id, top1_intent, correct, relevant, top1, hit5, recall5, rr, ndcg10, p5); unique_grain
-- description: Per E2 method and query (per_query.csv): the first document (feature_top_documents), its
--   intent and whether it is the query's (correct), beside the query's measures from the shared layer
--   (retrieval_query_metrics: Top-1, Hit@5, R@5, RR, nDCG@10, P@5).
SELECT
    m.method,
    m.corpus,
    m.query_row,
    m.qid,
    m.class AS intent,
    t.doc_row AS top1_doc_row,
    t.doc_id AS top1_doc_id,
    c.class AS top1_intent,
    c.class = m.class AS correct,
    m.relevant,
    m.top1,
    m.hit5,
    m.recall5,
    m.rr,
    m.ndcg10,
    m.p5
FROM models.retrieval_query_metrics AS m
JOIN models.feature_top_documents AS t ON t.method = m.method AND t.corpus = m.corpus AND t.query_row = m.query_row
JOIN models.document_classes AS c ON c.corpus = t.corpus AND c.doc_id = t.doc_id
