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


class FrameError(InputError):
    """A run or qrels given in Python (a DataFrame, an Arrow table, a dict of dicts) that breaks a rule:
    names the frame, the row (or the dict's keys) and the column, and the rule.

    >>> str(FrameError("run 'bm25' (pandas DataFrame)", "score is NaN or infinite", "score nan", "row 3", "score"))
    "run 'bm25' (pandas DataFrame), row 3, column score: score is NaN or infinite (score nan)"
    """

    def __init__(
        self, frame: str, rule: str, detail: str = "", where: str | None = None, column: str | None = None
    ) -> None:
        self.frame = frame
        self.where = where
        self.column = column
        place = "".join(f", {part}" for part in (where, f"column {column}" if column else None) if part)
        super().__init__(f"{frame}{place}", 0, rule, detail)
        self.args = (f"{frame}{place}: {rule}" + (f" ({detail})" if detail else ""),)


class GateError(RankhouseError):
    """The labels stay closed: a study without a freeze, or one that changed since its latest freeze, or
    its labels asked for without a verified freeze."""


class FreezeError(RankhouseError):
    """A freeze refused: a study that changed since its latest freeze needs a correction (a new freeze
    that supersedes it, with a reason), and a correction must name the latest freeze and change something."""


class QueryError(RankhouseError):
    """An analyst's SQL on a read-only warehouse failed (`rankhouse query`, rankhouse.connect)."""


class InternalError(RankhouseError):
    """An error rankhouse did not expect (a bug): the CLI's `internal error: ...` line, the original
    exception as its cause."""


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
