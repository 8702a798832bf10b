"""Where the project's SQL lives: `sql/` (DDL) and `models/` (the model files).

In a source checkout, and in an editable install of one, they are the checkout's top-level folders,
so an edited model takes effect at once. A built wheel ships them inside the package, as
`rankhouse/sql/` and `rankhouse/models/` in site-packages (pyproject.toml maps them), and those win
where they exist. `studies/` and `data/` are in a checkout only: `ROOT` is the checkout's root when
`in_checkout()`, and the folder holding the package (site-packages) otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent


def _shipped(name: str) -> Path:
    """The wheel's `rankhouse/<name>/` where it exists, else the checkout's top-level `<name>/`."""
    inside = PACKAGE / name
    return inside if inside.is_dir() else ROOT / name


SQL_DIR = _shipped("sql")
MODELS_DIR = _shipped("models")
STUDIES_DIR = ROOT / "studies"


def in_checkout() -> bool:
    """Whether rankhouse runs from a source checkout (with its studies/ and data/), not from a wheel."""
    return (ROOT / "pyproject.toml").is_file() and STUDIES_DIR.is_dir()


def read_sql(name: str) -> str:
    """The text of `sql/<name>`."""
    return (SQL_DIR / name).read_text(encoding="utf-8")


def default_cache_dir() -> Path:
    """Where rankhouse caches what it can rebuild (built ONNX graphs, compiled model templates):
    $XDG_CACHE_HOME/rankhouse, else ~/.cache/rankhouse.

    Example: `default_cache_dir()` -> PosixPath('/home/me/.cache/rankhouse').
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "rankhouse"
