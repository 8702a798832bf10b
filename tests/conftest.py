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


@pytest.fixture(scope="session")
def banking77_study(tmp_path_factory):
    """The BANKING77 study (studies/banking77.toml) run once end to end, for every test module that
    needs it; later studies on the same corpus (fusion) run in the same warehouse and reuse its
    vectors and retrieval models."""
    import csv
    import json
    from types import SimpleNamespace

    from rankhouse.paths import ROOT
    from rankhouse.report import write_outputs
    from rankhouse.study import Protocol, Study

    def texts(name: str) -> list[dict]:
        with (ROOT / "data" / "banking77" / name).open(newline="") as handle:
            return list(csv.DictReader(handle))

    root = tmp_path_factory.mktemp("banking77")
    warehouse = Warehouse(root / "b77.duckdb")
    study = Study(Protocol.load(ROOT / "studies" / "banking77.toml"), warehouse, root / "freezes")
    evaluation = study.run()
    write_outputs(study, evaluation, root / "out")
    yield SimpleNamespace(
        wh=warehouse,
        root=root,
        freeze=evaluation.freeze.freeze_id,
        results=json.loads((root / "out" / "results.json").read_text()),
        train=texts("train.csv"),
        test=texts("test.csv"),
    )
    warehouse.close()


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
