"""The warehouse: one DuckDB file (raw, models, meta) plus a separate labels file.

Warehouse and labels_path_for are imported from connection.py on first use, so that importing a module of
this package (layout.py's names, for the command line's options) does not import DuckDB.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rankhouse.warehouse.layout import DEFAULT_DB

if TYPE_CHECKING:
    from rankhouse.warehouse.connection import Warehouse, labels_path_for

__all__ = ["DEFAULT_DB", "Warehouse", "labels_path_for"]


def __getattr__(name: str) -> object:
    """Warehouse and labels_path_for, from connection.py when first used."""
    if name in ("Warehouse", "labels_path_for"):
        return getattr(importlib.import_module("rankhouse.warehouse.connection"), name)
    raise AttributeError(f"module 'rankhouse.warehouse' has no attribute {name!r}")
