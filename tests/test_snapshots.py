"""Snapshot (golden file) tests: every model's output on a small fixture, checked against tests/golden.

Rewrite the golden files after an intended change with `pytest tests/test_snapshots.py --update-golden`
and review the diff.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from conftest import FIXTURES

from rankhouse.evaluation import EvalOptions, compute_measures
from rankhouse.loaders import load_qrels, load_run
from rankhouse.measures import parse_measures
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project

GOLDEN = Path(__file__).parent / "golden"
TINY = FIXTURES / "tiny"
METRICS = ["AP", "AP@2", "GMAP", "nDCG", "nDCG@3", "nDCG_exp@3", "P@2", "R@2", "RR", "RR@1", "Rprec",
           "Success@1", "Bpref", "NumRet", "NumRel", "NumRelRet", "NumQ", "IPrec@0.0", "IPrec@0.5"]  # fmt: skip


def build_metrics(wh: Warehouse) -> None:
    load_qrels(wh, TINY / "qrels.txt")
    load_run(wh, TINY / "run_a.txt", "a")
    load_run(wh, TINY / "run_b.txt", "b")
    wh.open_gate()
    compute_measures(wh, parse_measures(METRICS), EvalOptions())


# group -> how to build its models on the fixture
BUILDERS = {"metrics": build_metrics}


def canonical_csv(wh: Warehouse, table: str) -> str:
    """A table as CSV: rows sorted, floats to 12 significant digits."""
    columns, rows = wh.columns(f"SELECT * FROM {table} ORDER BY ALL")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else f"{v:.12g}" if isinstance(v, float) else v for v in row])
    return out.getvalue()


@pytest.fixture(scope="module")
def built():
    project = Project.load()
    warehouses = {}
    for group, build in BUILDERS.items():
        wh = Warehouse(":memory:")
        build(wh)
        warehouses[group] = wh
    yield project, warehouses
    for wh in warehouses.values():
        wh.close()


def test_every_model_group_has_a_fixture():
    assert {m.group for m in Project.load().models.values()} <= set(BUILDERS)


@pytest.mark.parametrize("name", sorted(Project.load().models))
def test_model_output_matches_golden_file(built, name, request):
    project, warehouses = built
    model = project.models[name]
    actual = canonical_csv(warehouses[model.group], model.table)
    golden = GOLDEN / model.group / f"{name}.csv"
    if request.config.getoption("--update-golden"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual)
    assert golden.exists(), f"no golden file {golden}; run pytest --update-golden and review it"
    assert actual == golden.read_text()
