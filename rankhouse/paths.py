"""Where the project's SQL lives: `sql/` (DDL) and `models/` (the model files) at the repository root."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQL_DIR = ROOT / "sql"
MODELS_DIR = ROOT / "models"
STUDIES_DIR = ROOT / "studies"


def read_sql(name: str) -> str:
    """The text of `sql/<name>`."""
    return (SQL_DIR / name).read_text(encoding="utf-8")
