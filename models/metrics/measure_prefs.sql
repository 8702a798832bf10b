-- name: measure_prefs
-- version: 1
-- stage: evaluate
-- grain: study, system, query, measure
-- audits: not_null(study, system, query, measure, value); unique_grain; accepted_range(value, 0, )
-- description: trec_eval's preference measures (-R prefs, qrels_prefs) over each judgment group's
--   preferences (preference_pairs) and where the system placed their documents (preference_positions): a
--   preference a > b is fulfilled where a is placed before b (a retrieved document is before every
--   unretrieved one); it is "retrieved" where a and b both are, "implied" where exactly one is.
--   prefs_num_prefs_poss counts the preferences, prefs_num_prefs_ful the fulfilled ones, prefs_num_prefs_ful_ret
--   the fulfilled retrieved ones (summed over queries). prefs_simp is fulfilled over all, prefs_simp_ret
--   and prefs_simp_imp the same over the retrieved, and the retrieved and implied, preferences (0 where
--   there are none). prefs_avgjg (_ret, _imp) is the mean over the query's groups of that ratio in each
--   group (0 for a group without such preferences). prefs_pair (_ret, _imp) is the mean over document pairs
--   some group has a preference on (_ret: pairs both retrieved; _imp: pairs with a retrieved document) of
--   the share of the groups' preferences on the pair that the placing fulfils, a pair of unretrieved
--   documents counting 0. prefs_avgjg_Rnonrel is prefs_avgjg as if each group had as many non-relevant
--   documents (rel_level 0) as relevant ones, R: with N <= R non-relevant, R - N more that every retrieved
--   relevant document is fulfilled against (num_rel_ret (R - N) fulfilled, R (R - N) possible); with N > R,
--   only the first R non-relevant ones placed are kept; prefs_avgjg_Rnonrel_ret does the same over the
--   retrieved documents only (R the relevant retrieved, N the non-relevant retrieved; with N <= R the
--   possible ones still grow by num_rel (R - N)). Where N > R in a group of one sub-group, trec_eval also
--   counts each non-relevant document (retrieved, for _ret) against each kept one, itself included, as a
--   preference, fulfilled where it is retrieved and placed before the kept one (its recalculate()); in a
--   group of several sub-groups it keeps, for _ret, the first num_rel (not R) retrieved non-relevant
--   documents. A group without a possible preference there makes the query's value 0 (trec_eval's 0/0).
WITH requested AS (
    SELECT measure, family
    FROM models.measure_requests
    WHERE family IN (
        'prefs_num_prefs_poss', 'prefs_num_prefs_ful', 'prefs_num_prefs_ful_ret', 'prefs_simp', 'prefs_pair',
        'prefs_avgjg', 'prefs_avgjg_Rnonrel', 'prefs_simp_ret', 'prefs_pair_ret', 'prefs_avgjg_ret',
        'prefs_avgjg_Rnonrel_ret', 'prefs_simp_imp', 'prefs_pair_imp', 'prefs_avgjg_imp'
    )
),

-- each judgment group's documents, where the system placed them, numbered within the group's relevant or
-- non-relevant ones (class_order) and within those retrieved (retrieved_order)
placed AS (
    SELECT
        p.study,
        p.system,
        p.query,
        d.judgment_group,
        d.docno,
        d.relevant,
        d.several_sub_groups,
        p.retrieved,
        p.position,
        row_number() OVER (
            PARTITION BY p.study, p.system, p.query, d.judgment_group, d.relevant ORDER BY p.position
        ) AS class_order,
        row_number() OVER (
            PARTITION BY p.study, p.system, p.query, d.judgment_group, d.relevant, p.retrieved ORDER BY p.position
        ) AS retrieved_order
    FROM models.preference_positions AS p
    JOIN models.preference_documents AS d ON d.query = p.query AND d.docno = p.docno
),

group_counts AS (
    SELECT
        study,
        system,
        query,
        judgment_group,
        several_sub_groups,
        count(*) FILTER (WHERE relevant) AS num_rel,
        count(*) FILTER (WHERE NOT relevant) AS num_nonrel,
        count(*) FILTER (WHERE relevant AND retrieved) AS num_rel_ret,
        count(*) FILTER (WHERE NOT relevant AND retrieved) AS num_nonrel_ret
    FROM placed
    GROUP BY study, system, query, judgment_group, several_sub_groups
),

-- the documents prefs_avgjg_Rnonrel keeps (every relevant one, the first num_rel non-relevant ones) and
-- prefs_avgjg_Rnonrel_ret keeps (retrieved: every relevant one, the first num_rel_ret non-relevant ones
-- in a group of one sub-group, the first num_rel in a group of several)
kept AS (
    SELECT
        p.*,
        c.num_nonrel_ret,
        p.relevant OR p.class_order <= c.num_rel AS kept,
        p.retrieved AND (
            p.relevant OR p.retrieved_order <= CASE WHEN c.several_sub_groups THEN c.num_rel ELSE c.num_rel_ret END
        ) AS kept_retrieved
    FROM placed AS p
    JOIN group_counts AS c
        ON c.study = p.study AND c.system = p.system AND c.query = p.query AND c.judgment_group = p.judgment_group
),

pair_counts AS (
    SELECT
        a.study,
        a.system,
        a.query,
        a.judgment_group,
        count(*) AS possible,
        count(*) FILTER (WHERE a.retrieved AND a.position < b.position) AS fulfilled,
        count(*) FILTER (WHERE a.retrieved AND b.retrieved) AS possible_ret,
        count(*) FILTER (WHERE b.retrieved AND a.position < b.position) AS fulfilled_ret,
        count(*) FILTER (WHERE a.retrieved OR b.retrieved) AS possible_imp,
        count(*) FILTER (WHERE a.kept AND b.kept) AS possible_kept,
        count(*) FILTER (WHERE a.kept AND b.kept AND a.retrieved AND a.position < b.position) AS fulfilled_kept,
        count(*) FILTER (WHERE a.kept_retrieved AND b.kept_retrieved) AS possible_kept_ret,
        count(*) FILTER (
            WHERE a.kept_retrieved AND b.kept_retrieved AND a.position < b.position
        ) AS fulfilled_kept_ret
    FROM models.preference_pairs AS r
    JOIN kept AS a ON a.query = r.query AND a.judgment_group = r.judgment_group AND a.docno = r.preferred
    JOIN kept AS b
        ON b.study = a.study AND b.system = a.system AND b.query = a.query
        AND b.judgment_group = a.judgment_group AND b.docno = r.other
    GROUP BY a.study, a.system, a.query, a.judgment_group
),

-- trec_eval's extra preferences of a non-relevant document over a kept one (groups of one sub-group):
-- fulfilled where it is retrieved and placed before the kept one, the m-th non-relevant document kept
-- being after m - 1 others, of which at most num_nonrel_ret are retrieved
extra_fulfilled AS (
    SELECT study, system, query, judgment_group, sum(least(class_order - 1, num_nonrel_ret)) AS fulfilled
    FROM kept
    WHERE kept AND NOT relevant
    GROUP BY study, system, query, judgment_group
),

group_values AS (
    SELECT
        c.study,
        c.system,
        c.query,
        c.judgment_group,
        coalesce(n.possible, 0) AS possible,
        coalesce(n.fulfilled, 0) AS fulfilled,
        coalesce(n.possible_ret, 0) AS possible_ret,
        coalesce(n.fulfilled_ret, 0) AS fulfilled_ret,
        coalesce(n.possible_imp, 0) AS possible_imp,
        CASE
            WHEN c.num_rel >= c.num_nonrel
                THEN coalesce(n.fulfilled, 0) + c.num_rel_ret * (c.num_rel - c.num_nonrel)
            WHEN c.several_sub_groups THEN coalesce(n.fulfilled_kept, 0)
            ELSE coalesce(n.fulfilled_kept, 0) + coalesce(x.fulfilled, 0)
        END AS fulfilled_rnonrel,
        CASE
            WHEN c.num_rel >= c.num_nonrel THEN coalesce(n.possible, 0) + c.num_rel * (c.num_rel - c.num_nonrel)
            WHEN c.several_sub_groups THEN coalesce(n.possible_kept, 0)
            ELSE coalesce(n.possible_kept, 0) + c.num_nonrel * c.num_rel
        END AS possible_rnonrel,
        CASE
            WHEN c.num_rel_ret >= c.num_nonrel_ret
                THEN coalesce(n.fulfilled_ret, 0) + c.num_rel_ret * (c.num_rel_ret - c.num_nonrel_ret)
            WHEN c.several_sub_groups THEN coalesce(n.fulfilled_kept_ret, 0)
            ELSE coalesce(n.fulfilled_kept_ret, 0) + c.num_rel_ret * (c.num_rel_ret - 1) / 2
        END AS fulfilled_rnonrel_ret,
        CASE
            WHEN c.num_rel_ret >= c.num_nonrel_ret
                THEN coalesce(n.possible_ret, 0) + c.num_rel * (c.num_rel_ret - c.num_nonrel_ret)
            WHEN c.several_sub_groups THEN coalesce(n.possible_kept_ret, 0)
            ELSE coalesce(n.possible_kept_ret, 0) + c.num_nonrel_ret * c.num_rel_ret
        END AS possible_rnonrel_ret
    FROM group_counts AS c
    LEFT JOIN pair_counts AS n
        ON n.study = c.study AND n.system = c.system AND n.query = c.query AND n.judgment_group = c.judgment_group
    LEFT JOIN extra_fulfilled AS x
        ON x.study = c.study AND x.system = c.system AND x.query = c.query AND x.judgment_group = c.judgment_group
),

query_values AS (
    SELECT
        study,
        system,
        query,
        count(*) AS groups,
        sum(possible) AS possible,
        sum(fulfilled) AS fulfilled,
        sum(possible_ret) AS possible_ret,
        sum(fulfilled_ret) AS fulfilled_ret,
        sum(possible_imp) AS possible_imp,
        {{ exact_sum("CASE WHEN possible > 0 THEN fulfilled / possible ELSE 0 END") }} AS ratios,
        {{ exact_sum("CASE WHEN possible_ret > 0 THEN fulfilled_ret / possible_ret ELSE 0 END") }} AS ratios_ret,
        {{ exact_sum("CASE WHEN possible_imp > 0 THEN fulfilled / possible_imp ELSE 0 END") }} AS ratios_imp,
        {{ exact_sum("CASE WHEN possible_rnonrel > 0 THEN fulfilled_rnonrel / possible_rnonrel END") }} AS ratios_rnonrel,
        count(*) FILTER (WHERE possible_rnonrel = 0) AS undefined_rnonrel,
        {{ exact_sum(
            "CASE WHEN possible_rnonrel_ret > 0 THEN fulfilled_rnonrel_ret / possible_rnonrel_ret END"
        ) }} AS ratios_rnonrel_ret,
        count(*) FILTER (WHERE possible_rnonrel_ret = 0) AS undefined_rnonrel_ret
    FROM group_values
    GROUP BY study, system, query
),

-- each pair of documents some group has a preference on, and how many groups prefer either
document_pairs AS (
    SELECT
        query,
        least(preferred, other) AS first_doc,
        greatest(preferred, other) AS second_doc,
        count(*) FILTER (WHERE preferred < other) AS first_preferred,
        count(*) FILTER (WHERE preferred > other) AS second_preferred
    FROM models.preference_pairs
    GROUP BY query, least(preferred, other), greatest(preferred, other)
),

-- the share of a pair's preferences that prefer the document placed first (a pair of unretrieved ones: 0)
pair_shares AS (
    SELECT
        a.study,
        a.system,
        a.query,
        a.retrieved AND b.retrieved AS both_retrieved,
        a.retrieved OR b.retrieved AS any_retrieved,
        CASE
            WHEN NOT (a.retrieved OR b.retrieved) THEN 0
            WHEN a.position < b.position THEN d.first_preferred / (d.first_preferred + d.second_preferred)
            ELSE d.second_preferred / (d.first_preferred + d.second_preferred)
        END AS share
    FROM document_pairs AS d
    JOIN models.preference_positions AS a ON a.query = d.query AND a.docno = d.first_doc
    JOIN models.preference_positions AS b
        ON b.study = a.study AND b.system = a.system AND b.query = a.query AND b.docno = d.second_doc
),

pair_values AS (
    SELECT
        study,
        system,
        query,
        count(*) AS pairs,
        {{ exact_sum("share") }} AS shares,
        count(*) FILTER (WHERE both_retrieved) AS pairs_ret,
        {{ exact_sum("CASE WHEN both_retrieved THEN share ELSE 0 END") }} AS shares_ret,
        count(*) FILTER (WHERE any_retrieved) AS pairs_imp
    FROM pair_shares
    GROUP BY study, system, query
)

SELECT
    e.study,
    e.system,
    e.query,
    m.measure,
    CAST(CASE m.family
        WHEN 'prefs_num_prefs_poss' THEN q.possible
        WHEN 'prefs_num_prefs_ful' THEN q.fulfilled
        WHEN 'prefs_num_prefs_ful_ret' THEN q.fulfilled_ret
        WHEN 'prefs_simp' THEN CASE WHEN q.possible > 0 THEN q.fulfilled / q.possible ELSE 0 END
        WHEN 'prefs_simp_ret' THEN CASE WHEN q.possible_ret > 0 THEN q.fulfilled_ret / q.possible_ret ELSE 0 END
        WHEN 'prefs_simp_imp' THEN CASE WHEN q.possible_imp > 0 THEN q.fulfilled / q.possible_imp ELSE 0 END
        WHEN 'prefs_avgjg' THEN q.ratios / q.groups
        WHEN 'prefs_avgjg_ret' THEN q.ratios_ret / q.groups
        WHEN 'prefs_avgjg_imp' THEN q.ratios_imp / q.groups
        WHEN 'prefs_avgjg_Rnonrel' THEN CASE WHEN q.undefined_rnonrel = 0 THEN q.ratios_rnonrel / q.groups ELSE 0 END
        WHEN 'prefs_avgjg_Rnonrel_ret'
            THEN CASE WHEN q.undefined_rnonrel_ret = 0 THEN q.ratios_rnonrel_ret / q.groups ELSE 0 END
        WHEN 'prefs_pair' THEN CASE WHEN v.pairs > 0 THEN v.shares / v.pairs ELSE 0 END
        WHEN 'prefs_pair_ret' THEN CASE WHEN v.pairs_ret > 0 THEN v.shares_ret / v.pairs_ret ELSE 0 END
        WHEN 'prefs_pair_imp' THEN CASE WHEN v.pairs_imp > 0 THEN v.shares / v.pairs_imp ELSE 0 END
    END AS DOUBLE) AS value
FROM models.evaluated_queries AS e
CROSS JOIN requested AS m
JOIN query_values AS q ON q.study = e.study AND q.system = e.system AND q.query = e.query
LEFT JOIN pair_values AS v ON v.study = e.study AND v.system = e.system AND v.query = e.query
