"""rankhouse: an embedded DuckDB warehouse for reproducible retrieval experiments."""

__version__ = "0.1.0"
