"""Errors that carry a message meant for the user (the CLI prints them without a traceback)."""

from __future__ import annotations

from pathlib import Path


class RankhouseError(Exception):
    """Base class for every error rankhouse reports to its user."""


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
