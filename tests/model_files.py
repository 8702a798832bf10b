"""Model files written by hand: a header and a query under root/<group>/<name>.sql (the DAG's tests, in
tests/warehouse/, and the Spark engine's, in tests/spark/)."""

from __future__ import annotations

from pathlib import Path


def model(root: Path, name: str, sql: str, *, stage: str = "prepare", grain: str = "run_id",
          audits: str = "not_null(run_id); unique_grain", parameters: str = "", extra: str = "",
          group: str = "staging") -> Path:  # fmt: skip
    """Write a model file under root/group/name.sql."""
    header = [f"-- name: {name}", "-- version: 1", f"-- stage: {stage}", f"-- grain: {grain}",
              f"-- audits: {audits}", f"-- description: test model {name}."]  # fmt: skip
    if parameters:
        header.append(f"-- parameters: {parameters}")
    if extra:
        header.append(extra)
    path = root / group / f"{name}.sql"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header) + "\n" + sql + "\n")
    return path
