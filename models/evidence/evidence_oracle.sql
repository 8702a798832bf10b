-- name: evidence_oracle
-- version: 2
-- stage: evaluate
-- grain: bundle, task_id, rank
-- audits: not_null(bundle, task_id, rank, doc_id, covered, dcg, subsets, tied, mask_overflow); unique_grain; accepted_range(rank, 1, ); accepted_range(mask_overflow, 0, 0); at_least_one_row
-- parameters: budget = 5
-- description: Seed 000's oracle, a diagnostic agreed-label coverage bound, not a ranking or a
--   baseline; it reads labels, so it is built only after the label-free selections are frozen. Every
--   `budget`-element subset of each pool is enumerated (C(n, 5); a pool of fewer than `budget`
--   members is its only subset: it is padded with empty slots), and the best is, in order: (1) the
--   most requirements with an agreed obligation in at least one of its documents; (2) the largest
--   pooled DCG5 with its documents sorted by mean grade descending and doc_id ascending (the ideal is
--   the same for every subset of a pool, so this is the largest nDCG5; each term is rounded to 1e-12
--   and added as an integer, so equal subsets tie exactly); (3) the lexicographically smaller list of
--   its sorted doc_ids. Slots number a pool's members by doc_id, so (3) compares the slots, as
--   zero-padded text. A document's agreed requirements are a bit mask (requirement k is bit k), so a
--   subset's coverage is the bit count of its members' OR: requirements 0..61 only; a higher one is
--   counted in `mask_overflow`, whose audit stops the study. The rank is the order of (2). `subsets`
--   counts the subsets enumerated, `tied` those equal to the best in (1) and (2).
WITH members AS (
    SELECT
        bundle,
        task_id,
        doc_id,
        gain,
        row_number() OVER (PARTITION BY bundle, task_id ORDER BY doc_id) AS slot,
        row_number() OVER (PARTITION BY bundle, task_id ORDER BY gain DESC, doc_id) AS grade_rank,
        count(*) OVER (PARTITION BY bundle, task_id) AS pool_size
    FROM models.evidence_pair_labels
),

pad_numbers AS (
    {% for k in range(1, budget + 1) %}SELECT {{ k }} AS k{{ " UNION ALL " if not loop.last }}{% endfor %}
),

padded AS (
    SELECT bundle, task_id, doc_id, gain, slot, grade_rank
    FROM members
    UNION ALL
    SELECT s.bundle, s.task_id, CAST(NULL AS VARCHAR) AS doc_id, 0.0 AS gain, s.pool_size + n.k AS slot,
        s.pool_size + n.k AS grade_rank
    FROM (SELECT DISTINCT bundle, task_id, pool_size FROM members) AS s
    JOIN pad_numbers AS n ON n.k <= {{ budget }} - s.pool_size
),

slots AS (
    SELECT
        p.bundle,
        p.task_id,
        p.doc_id,
        p.gain,
        p.slot,
        p.grade_rank,
        coalesce(bit_or(CASE WHEN o.requirement < 62 THEN CAST(pow(2, o.requirement) AS BIGINT) END), 0) AS mask,
        count(o.requirement) FILTER (WHERE o.requirement >= 62) AS overflow
    FROM padded AS p
    LEFT JOIN models.evidence_agreed_obligations AS o
        ON o.bundle = p.bundle AND o.task_id = p.task_id AND o.doc_id = p.doc_id
    GROUP BY p.bundle, p.task_id, p.doc_id, p.gain, p.slot, p.grade_rank
),

subsets AS (
    -- slot_1 < slot_2 < ...: each subset once; a member's DCG position is 1 + the members before it
    -- in grade order (dcg_term, the DCG discount of models/metrics/measure_ndcg.sql)
    SELECT
        s1.bundle,
        s1.task_id,
        {%- for i in range(1, budget + 1) %}
        s{{ i }}.slot AS slot_{{ i }},
        {%- endfor %}
        bit_count({% for i in range(1, budget + 1) %}s{{ i }}.mask{{ " | " if not loop.last }}{% endfor %}) AS covered,
        {%- for i in range(1, budget + 1) %}
        {%- set position %}1{% for j in range(1, budget + 1) if j != i %} + CASE WHEN s{{ j }}.grade_rank < s{{ i }}.grade_rank THEN 1 ELSE 0 END{% endfor %}{% endset %}
        CAST(round({{ dcg_term('s' ~ i ~ '.gain', position) }} * 1e12) AS BIGINT)
        {%- if not loop.last %} +{% endif %}
        {%- endfor %} AS dcg_units
    FROM slots AS s1
    {%- for i in range(2, budget + 1) %}
    JOIN slots AS s{{ i }} ON s{{ i }}.bundle = s1.bundle AND s{{ i }}.task_id = s1.task_id AND s{{ i }}.slot > s{{ i - 1 }}.slot
    {%- endfor %}
),

best_coverage AS (
    SELECT bundle, task_id, max(covered) AS covered, count(*) AS subsets
    FROM subsets
    GROUP BY bundle, task_id
),

best_dcg AS (
    SELECT b.bundle, b.task_id, b.covered, b.subsets, max(s.dcg_units) AS dcg_units
    FROM subsets AS s
    JOIN best_coverage AS b ON b.bundle = s.bundle AND b.task_id = s.task_id AND b.covered = s.covered
    GROUP BY b.bundle, b.task_id, b.covered, b.subsets
),

candidates AS (
    SELECT
        s.*,
        b.subsets,
        {% for i in range(1, budget + 1) %}lpad(CAST(s.slot_{{ i }} AS VARCHAR), 6, '0'){{ " || " if not loop.last }}{% endfor %} AS sorted_key
    FROM subsets AS s
    JOIN best_dcg AS b
        ON b.bundle = s.bundle AND b.task_id = s.task_id AND b.covered = s.covered AND b.dcg_units = s.dcg_units
),

firsts AS (
    SELECT bundle, task_id, min(sorted_key) AS sorted_key, count(*) AS tied
    FROM candidates
    GROUP BY bundle, task_id
),

chosen AS (
    {%- for i in range(1, budget + 1) %}
    SELECT c.bundle, c.task_id, c.slot_{{ i }} AS slot, c.covered, c.dcg_units, c.subsets, f.tied
    FROM candidates AS c
    JOIN firsts AS f ON f.bundle = c.bundle AND f.task_id = c.task_id AND f.sorted_key = c.sorted_key
    {%- if not loop.last %}
    UNION ALL
    {%- endif %}
    {%- endfor %}
),

overflows AS (
    SELECT bundle, task_id, sum(overflow) AS mask_overflow
    FROM slots
    GROUP BY bundle, task_id
)

SELECT
    c.bundle,
    c.task_id,
    row_number() OVER (PARTITION BY c.bundle, c.task_id ORDER BY s.grade_rank) AS rank,
    s.doc_id,
    c.covered,
    c.dcg_units / 1e12 AS dcg,
    c.subsets,
    c.tied,
    o.mask_overflow
FROM chosen AS c
JOIN slots AS s ON s.bundle = c.bundle AND s.task_id = c.task_id AND s.slot = c.slot
JOIN overflows AS o ON o.bundle = c.bundle AND o.task_id = c.task_id
WHERE s.doc_id IS NOT NULL
