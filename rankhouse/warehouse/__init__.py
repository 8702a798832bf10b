"""The warehouse: one DuckDB file (raw, models, meta) plus a separate labels file."""

from rankhouse.warehouse.connection import DEFAULT_DB, Warehouse, labels_path_for

__all__ = ["DEFAULT_DB", "Warehouse", "labels_path_for"]
