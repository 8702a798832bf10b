"""Inputs load what they say (issue 13, point 10): a path is read as written, never as a glob."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rankhouse.loaders import load_qrels, load_run


def write(path: Path, data: str | bytes) -> Path:
    """Write `data` (text as UTF-8) to `path`, making its directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# -- 1. a path is a path: never a glob -----------------------------------------------------------------
@pytest.mark.parametrize(("name", "decoy"), [("g[ab].run", "ga.run"), ("g[ab]*?.run", "gab.run")])
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_path_with_glob_characters_loads_that_file_and_records_its_hash(wh, tmp_path, name, decoy, kind):
    """DuckDB's readers glob their path: `g[ab].run` would read `ga.run`. The rows and the SHA-256 are
    of the file named, whatever characters its name has."""
    line = "q1 Q0 {} 1 2.5 tag\n" if kind == "run" else "q1 0 {} 1\n"
    write(tmp_path / decoy, line.format("decoy"))
    named = write(tmp_path / name, line.format("named"))
    if kind == "run":
        load_run(wh, named, "r")
        docs = wh.sql("SELECT docno FROM raw.runs")
        sha = wh.sql("SELECT sha256 FROM meta.sources")
    else:
        load_qrels(wh, named)
        wh.open_gate()
        docs = wh.sql("SELECT docno FROM gate.qrels")
        sha = wh.sql("SELECT sha256 FROM gate.meta.sources")
    assert docs == [("named",)]
    assert sha == [(hashlib.sha256(named.read_bytes()).hexdigest(),)]
