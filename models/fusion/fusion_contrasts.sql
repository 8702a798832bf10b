-- name: fusion_contrasts
-- version: 2
-- stage: evaluate
-- grain: corpus, rule, baseline, measure
-- audits: not_null(corpus, rule, baseline, measure, mean, ci_low, ci_high, replicates); unique_grain; at_least_one_row
-- parameters: fusion_plan = "fusion_bootstrap", contrast_measures = ["nDCG@10", "R@100", "RR@10", "RR", "Top-1"]
-- description: Paired bootstrap of every rule against the dense arm and against RRF, for each of
--   contrast_measures: per replicate of the stored, seeded plan (query positions drawn with
--   replacement), the mean per-query difference; the interval is its 2.5% and 97.5% quantile. The
--   differences are laid out one column per contrast, so that the plan is read once for all of them.
{%- set columns = {"nDCG@10": "ndcg10", "R@100": "recall100", "RR@10": "rr10", "RR": "rr", "Top-1": "top1"} %}
{%- set rules = ["bm25", "dense", "rrf", "rsf", "mixture", "fisher", "stouffer"] %}
{%- set contrasts = [] %}
{%- for measure in contrast_measures %}{% for baseline in ["dense", "rrf"] %}{% for rule in rules if rule != baseline %}
{%- set _ = contrasts.append((rule, baseline, measure)) %}
{%- endfor %}{% endfor %}{% endfor %}
WITH positions AS (
    SELECT corpus, query_row, row_number() OVER (PARTITION BY corpus ORDER BY query_row) - 1 AS item
    FROM (SELECT DISTINCT corpus, query_row FROM models.fusion_query_metrics) AS judged
),

differences AS (
    SELECT
        p.corpus,
        p.item,
        {%- for rule, baseline, measure in contrasts %}
        max(CASE WHEN m.rule = '{{ rule }}' THEN m.{{ columns[measure] }} END)
            - max(CASE WHEN m.rule = '{{ baseline }}' THEN m.{{ columns[measure] }} END) AS d{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    FROM models.fusion_query_metrics AS m
    JOIN positions AS p ON p.corpus = m.corpus AND p.query_row = m.query_row
    GROUP BY p.corpus, p.item
),

replicates AS (
    SELECT
        d.corpus,
        r.replicate,
        {%- for contrast in contrasts %}
        avg(d.d{{ loop.index }}) AS d{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    FROM raw.resample_plans AS r
    JOIN differences AS d ON d.item = r.item
    WHERE r.plan = {{ fusion_plan | literal }}
    GROUP BY d.corpus, r.replicate
),

intervals AS (
    {%- for rule, baseline, measure in contrasts %}
    SELECT
        corpus,
        '{{ rule }}' AS rule,
        '{{ baseline }}' AS baseline,
        '{{ measure }}' AS measure,
        quantile_cont(d{{ loop.index }}, 0.025) AS ci_low,
        quantile_cont(d{{ loop.index }}, 0.975) AS ci_high,
        count(*) AS replicates
    FROM replicates
    GROUP BY corpus
    {{ "UNION ALL" if not loop.last }}
    {%- endfor %}
),

observed AS (
    {%- for rule, baseline, measure in contrasts %}
    SELECT corpus, '{{ rule }}' AS rule, '{{ baseline }}' AS baseline, '{{ measure }}' AS measure, avg(d{{ loop.index }}) AS mean
    FROM differences
    GROUP BY corpus
    {{ "UNION ALL" if not loop.last }}
    {%- endfor %}
)

SELECT o.corpus, o.rule, o.baseline, o.measure, o.mean, i.ci_low, i.ci_high, i.replicates
FROM observed AS o
JOIN intervals AS i ON i.corpus = o.corpus AND i.rule = o.rule AND i.baseline = o.baseline AND i.measure = o.measure
