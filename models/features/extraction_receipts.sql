-- name: extraction_receipts
-- version: 2
-- stage: prepare
-- grain: corpus, split
-- audits: not_null(corpus, split, calls); unique_grain
-- parameters: corpus = "banking77", schema = "banking77_features", provider = "minilm"
-- dialect: duckdb: epoch_us
-- description: The receipts of the extraction (seed 004, operational plan), per split (train, test,
--   requirements) and over all of them (split 'all'): the extractors and model ids, calls (attempts,
--   failed ones too) by status, tokens, estimated cost and the part of it possibly charged by failed
--   attempts, latency percentiles (over every attempt), wall time (first start to last end, pauses
--   between runs included) and busy time (the union of the attempts' intervals), and the complete and
--   missing rows of the store (train and test; NULL for requirements). in_flight counts attempts that were
--   started and never ended (the process was killed meanwhile): possibly charged at their estimate, and
--   left out of the latency percentiles.
{#- the statuses of raw.extraction_calls, each counted in a column of its own -#}
{%- set statuses = ["ok", "http_429", "http_5xx", "http_4xx", "timeout", "connection", "malformed", "invalid",
                   "in_flight"] %}
{%- set costs = ["cost_usd", "possibly_charged_usd"] %}
WITH scoped_calls AS (
    SELECT split AS scope, * FROM models.extraction_calls
    UNION ALL
    SELECT 'all' AS scope, * FROM models.extraction_calls
),

-- seconds since the scope's first start, from whole microseconds (exact, unlike epoch() of today's dates)
timed_calls AS (
    SELECT
        scope,
        (epoch_us(started_at) - min(epoch_us(started_at)) OVER (PARTITION BY scope)) / 1000000 AS started,
        (epoch_us(started_at) - min(epoch_us(started_at)) OVER (PARTITION BY scope)) / 1000000
        + latency_seconds AS ended,
        split,
        row_index,
        attempt
    FROM scoped_calls
),

-- gaps and islands: an attempt that starts after every earlier one of its scope ended opens an island
island_starts AS (
    SELECT
        scope,
        started,
        ended,
        CASE
            WHEN started > max(ended) OVER (
                PARTITION BY scope ORDER BY started, ended, split, row_index, attempt
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) THEN 1
            ELSE 0
        END AS opens,
        row_number() OVER (PARTITION BY scope ORDER BY started, ended, split, row_index, attempt) AS position
    FROM timed_calls
),

islands AS (
    SELECT
        scope,
        started,
        ended,
        sum(opens) OVER (PARTITION BY scope ORDER BY position ROWS UNBOUNDED PRECEDING) AS island
    FROM island_starts
),

busy AS (
    SELECT scope, max(island_end) - min(island_start) AS wall_seconds, sum(island_end - island_start) AS busy_seconds
    FROM (
        SELECT scope, island, min(started) AS island_start, max(ended) AS island_end
        FROM islands
        GROUP BY scope, island
    ) AS spans
    GROUP BY scope
),

call_totals AS (
    SELECT
        scope,
        string_agg(DISTINCT extractor, ', ' ORDER BY extractor) AS extractors,
        string_agg(DISTINCT model_id, ', ' ORDER BY model_id) AS model_ids,
        count(*) AS calls,
        {%- for status in statuses %}
        count(*) FILTER (WHERE status = {{ status | literal }}) AS {{ status | identifier }},
        {%- endfor %}
        coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
        coalesce(sum(completion_tokens), 0) AS completion_tokens,
        sum(cost_usd) AS cost_usd,
        coalesce(sum(cost_usd) FILTER (WHERE possibly_charged), 0) AS possibly_charged_usd,
        {{ quantile('latency_seconds', 0.5) }} FILTER (WHERE status <> 'in_flight') AS latency_p50,
        {{ quantile('latency_seconds', 0.9) }} FILTER (WHERE status <> 'in_flight') AS latency_p90,
        {{ quantile('latency_seconds', 0.99) }} FILTER (WHERE status <> 'in_flight') AS latency_p99,
        min(started_at) AS first_started_at
    FROM scoped_calls
    GROUP BY scope
),

completeness AS (
    SELECT split AS scope, expected, complete, missing
    FROM models.feature_completeness
    UNION ALL
    SELECT 'all' AS scope, sum(expected), sum(complete), sum(missing)
    FROM models.feature_completeness
),

scopes AS (
    SELECT scope FROM call_totals
    UNION
    SELECT scope FROM completeness WHERE expected IS NOT NULL
)

SELECT
    {{ corpus }} AS corpus,
    s.scope AS split,
    t.extractors,
    t.model_ids,
    {%- for total in ["calls"] + statuses + ["prompt_tokens", "completion_tokens"] + costs %}
    coalesce(t.{{ total | identifier }}, 0) AS {{ total | identifier }},
    {%- endfor %}
    t.latency_p50,
    t.latency_p90,
    t.latency_p99,
    t.first_started_at,
    b.wall_seconds,
    b.busy_seconds,
    c.expected,
    c.complete,
    c.missing
FROM scopes AS s
LEFT JOIN call_totals AS t ON t.scope = s.scope
LEFT JOIN busy AS b ON b.scope = s.scope
LEFT JOIN completeness AS c ON c.scope = s.scope
