"""Seed 004's named features, extracted into a resumable store in the warehouse (issue 15, section 2).

    store.py      raw.feature_values, raw.extraction_calls, raw.requirement_values/_flags: reads and writes
    http.py       the `http` provider: an OpenAI-compatible chat-completions client with JSON-schema answers
    scheduler.py  running it over many rows: bounded concurrency, start rate, retries, ceiling, stops
    minilm.py     the `minilm` provider: the offline stand-in and its documented rule
    run.py        the generators feature_extraction and requirement_interpretation

The runtime settings (concurrency, start rate, cost ceiling, retries, timeout: no methodology), the JSON
POST and the retry policy are the shared rankhouse/endpoint.py's. docs/features.md describes the store, the
providers and the stand-in's rule.
"""
