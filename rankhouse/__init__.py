"""rankhouse: an embedded DuckDB warehouse for reproducible retrieval experiments.

The Python API (rankhouse/api.py, docs/python.md): evaluate, compare, fuse, connect and Study, imported
on first use, so that `import rankhouse` (and with it the command line's start) stays as light as the
version string. Their types are in __init__.pyi.

    >>> import rankhouse
    >>> rankhouse.evaluate("qrels.test", ["results.test"], ["AP"])  # doctest: +SKIP
"""

__version__ = "0.1.0"

__all__ = [
    "ComparisonResult", "Connection", "EvaluationResult", "Frozen", "FusionResult", "Study", "StudyEvaluation",
    "StudyStatus", "Table", "__version__", "compare", "connect", "errors", "evaluate", "fuse",
]  # fmt: skip
API = frozenset(__all__) - {"__version__", "errors"}


def __getattr__(name: str) -> object:
    """The API's names (and rankhouse.errors), imported when first used."""
    import importlib

    if name in API:
        return getattr(importlib.import_module("rankhouse.api"), name)
    if name == "errors":
        return importlib.import_module("rankhouse.errors")
    raise AttributeError(f"module 'rankhouse' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API, "errors"])
