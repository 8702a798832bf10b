"""Shared fixtures: paths, warehouses, and plain-Python readers for the oracles."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankhouse.warehouse import Warehouse

FIXTURES = Path(__file__).parent / "fixtures"
TREC = FIXTURES / "trec_eval"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="Rewrite the golden files of the snapshot tests.")


@pytest.fixture
def wh():
    """A throw-away in-memory warehouse (with its own throw-away labels file)."""
    with Warehouse(":memory:") as warehouse:
        yield warehouse


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Qrels as pytrec_eval wants them, read independently of rankhouse."""
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            qid, _, docno, rel = line.split()
            qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """A run as pytrec_eval wants it (fields after the sixth ignored, as trec_eval does)."""
    run: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            qid, _, docno, _, score = line.split()[:5]
            run.setdefault(qid, {})[docno] = float(score)
    return run
