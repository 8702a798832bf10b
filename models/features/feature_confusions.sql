-- name: feature_confusions
-- version: 1
-- stage: evaluate
-- grain: method, rank
-- audits: not_null(method, rank, query_intent, top1_intent, errors, method_errors); unique_grain
-- parameters: corpus = "banking77", confusion_pairs = 10
-- description: The confusion summary of seed 004's report: per E2 method, its most frequent errors
--   as (query intent, intent of the first document) pairs with the two intents different, the
--   `confusion_pairs` most frequent first (ties by the two intents' names), with the method's
--   errors in all (method_errors: the queries whose first document is of another intent).
WITH predictions AS (
    SELECT t.method, qc.class AS query_intent, dc.class AS top1_intent
    FROM models.feature_top_documents AS t
    JOIN models.query_classes AS qc ON qc.corpus = t.corpus AND qc.qid = t.qid
    JOIN models.document_classes AS dc ON dc.corpus = t.corpus AND dc.doc_id = t.doc_id
    WHERE t.corpus = {{ corpus | literal }}
),

error_pairs AS (
    SELECT method, query_intent, top1_intent, count(*) AS errors
    FROM predictions
    WHERE query_intent <> top1_intent
    GROUP BY method, query_intent, top1_intent
),

ranked AS (
    SELECT
        method,
        query_intent,
        top1_intent,
        errors,
        sum(errors) OVER (PARTITION BY method) AS method_errors,
        row_number() OVER (PARTITION BY method ORDER BY errors DESC, query_intent, top1_intent) AS rank
    FROM error_pairs
)

SELECT method, rank, query_intent, top1_intent, errors, CAST(method_errors AS BIGINT) AS method_errors
FROM ranked
WHERE rank <= {{ confusion_pairs }}
