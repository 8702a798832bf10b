{#- Seed 000's objective, F(S) = [sum_f max_{d in S} g(f, d) - sum_{unordered {d, e} in S} p(d, e)] / (m + 1),
    for every set S of a relation `sets` with columns (bundle, method, task_id, k, doc_id): doc_id is a
    member of the set (bundle, method, task_id, k), e.g. the first k documents of a selection. `gains`
    has the normalised facet gains (bundle, task_id, facet, doc_id, gain, facets = m + 1) and
    `penalties` the pair penalties (bundle, task_id, doc_a < doc_b, penalty). Rows: the set's keys,
    coverage (the first sum), penalty (the second, 0 without a pair) and objective F; both sums exact
    (exact_sum), as the greedy's are (math.fsum), so that F does not depend on the order of S. The greedy
    selection (rankhouse/select.py) maximises the same F step by step. -#}
{% macro coverage_objective(sets, gains, penalties) -%}
SELECT
    c.bundle,
    c.method,
    c.task_id,
    c.k,
    c.coverage,
    coalesce(p.penalty, 0.0) AS penalty,
    (c.coverage - coalesce(p.penalty, 0.0)) / c.facets AS objective
FROM (
    SELECT bundle, method, task_id, k, {{ exact_sum('best') }} AS coverage, max(facets) AS facets
    FROM (
        SELECT s.bundle, s.method, s.task_id, s.k, g.facet, max(g.gain) AS best, max(g.facets) AS facets
        FROM {{ sets }} AS s
        JOIN {{ gains }} AS g ON g.bundle = s.bundle AND g.task_id = s.task_id AND g.doc_id = s.doc_id
        GROUP BY s.bundle, s.method, s.task_id, s.k, g.facet
    ) AS best_per_facet
    GROUP BY bundle, method, task_id, k
) AS c
LEFT JOIN (
    SELECT a.bundle, a.method, a.task_id, a.k, {{ exact_sum('x.penalty') }} AS penalty
    FROM {{ sets }} AS a
    JOIN {{ sets }} AS b
        ON b.bundle = a.bundle AND b.method = a.method AND b.task_id = a.task_id AND b.k = a.k AND b.doc_id > a.doc_id
    JOIN {{ penalties }} AS x
        ON x.bundle = a.bundle AND x.task_id = a.task_id AND x.doc_a = a.doc_id AND x.doc_b = b.doc_id
    GROUP BY a.bundle, a.method, a.task_id, a.k
) AS p ON p.bundle = c.bundle AND p.method = c.method AND p.task_id = c.task_id AND p.k = c.k
{%- endmacro %}
