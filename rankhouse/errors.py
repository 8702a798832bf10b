"""Errors that carry a message meant for the user (the CLI prints them without a traceback)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class RankhouseError(Exception):
    """Base class for every error rankhouse reports to its user."""


class ScoringStopped(RankhouseError):
    """A passage scorer stopped before every pair had its score: `scores` holds the answered ones (NaN for
    the others), which the caller keeps (the cache) so that a rerun asks only for the rest."""

    def __init__(self, message: str, scores: object) -> None:
        super().__init__(message)
        self.scores = scores


class InputError(RankhouseError):
    """A file that breaks a rule: names the file, the line and the rule."""

    def __init__(self, path: str | Path, line: int, rule: str, detail: str = "") -> None:
        self.path = str(path)
        self.line = line
        self.rule = rule
        self.detail = detail
        message = f"{self.path}:{line}: {rule}"
        if detail:
            message += f" ({detail})"
        super().__init__(message)


class ModelError(RankhouseError):
    """A model that cannot be built into the DAG (bad header, unknown table, cycle...)."""

    def __init__(self, model: str, problem: str) -> None:
        self.model = model
        super().__init__(f"model {model}: {problem}")


class AuditError(RankhouseError):
    """A blocking audit failed: names the model, the audit and a few offending rows."""

    def __init__(self, model: str, audit: str, rows: list[tuple], columns: list[str]) -> None:
        self.model = model
        self.audit = audit
        self.rows = rows
        shown = "\n".join("  " + ", ".join(f"{c}={v!r}" for c, v in zip(columns, row)) for row in rows)
        super().__init__(f"model {model}: audit {audit} failed; offending rows:\n{shown}")


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice a mistyped name most likely meant: one that differs only in case, else the closest
    spelling (difflib, ignoring case), else None.

    >>> closest("ndcg", ["nDCG", "AP"]), closest("banking7", ["banking77", "trec_sample"]), closest("x", ["AP"])
    ('nDCG', 'banking77', None)
    """
    by_lower: dict[str, str] = {}
    for choice in choices:
        by_lower.setdefault(choice.lower(), choice)
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[found[0]] if found else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest choice (see closest), or nothing."""
    found = closest(name, choices)
    return f"; did you mean {found!r}?" if found is not None and found != name else ""
