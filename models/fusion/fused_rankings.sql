-- name: fused_rankings
-- version: 4
-- stage: prepare
-- grain: rule, corpus, query_row, rank
-- audits: not_null(rule, corpus, query_row, doc_row, score, rank); accepted_range(rank, 1, ); at_least_one_row
-- parameters: fusion_rules = ["rrf", "rsf", "mixture", "fisher", "stouffer"], rank_arms = true
-- columns: dense_score = "The dense arm's score of the document, the first tie-breaker (NULL where it has none)",
--   row_type = "The row type's code, the second tie-breaker (seed 003, section 8): 'document', the one row
--   type of these corpora, so a constant that is in the key all the same"
-- description: Every fusion rule's ranking of the candidate union (the rules `fusion_rules` names, each
--   the model fusion_<rule>: the one list of rules), and with rank_arms each arm alone (a study's bm25
--   and dense; `rankhouse fuse` ranks an arm only when asked), in the total order of seed 003, section 8:
--   score descending, then the dense score descending, then the row-type code (constant: one row type),
--   then the document's row index (sql/macros/fusion.sql fusion_order). Fusing run
--   files, the run named dense plays the dense arm, and a row it did not score comes after those it
--   did. The p-value rules (mixture, fisher, stouffer) rank complete candidates only: an incomplete one
--   has no score (candidate_completeness). Unique by construction (row_number within each rule and
--   query), so the grain is not audited.
{{- require(fusion_rules or rank_arms, "fused_rankings ranks nothing: name a rule in fusion_rules or set rank_arms") }}
WITH scores AS (
    {%- for rule in fusion_rules %}
    SELECT {{ rule | literal }} AS rule, corpus, query_row, doc_row, score FROM models.fusion_{{ rule | identifier }}
    {%- if not loop.last or rank_arms %}
    UNION ALL
    {%- endif %}
    {%- endfor %}
    {%- if rank_arms %}
    SELECT arm AS rule, corpus, query_row, doc_row, score FROM models.fusion_candidates
    {%- endif %}
),

-- Section 8's row type: one kind of row (a document) in these corpora.
typed AS (
    SELECT rule, corpus, query_row, doc_row, score, 'document' AS row_type
    FROM scores
),

dense AS (
    SELECT corpus, query_row, doc_row, score AS dense_score
    FROM models.fusion_candidates
    WHERE arm = 'dense'
)

SELECT
    s.rule,
    s.corpus,
    s.query_row,
    s.doc_row,
    s.score,
    d.dense_score,
    s.row_type,
    row_number() OVER (
        PARTITION BY s.rule, s.corpus, s.query_row ORDER BY {{ fusion_order('s.score', 'd.dense_score', 's.row_type', 's.doc_row') }}
    ) AS rank
FROM typed AS s
LEFT JOIN dense AS d ON d.corpus = s.corpus AND d.query_row = s.query_row AND d.doc_row = s.doc_row
