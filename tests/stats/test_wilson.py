"""The Wilson interval model (models/stats/wilson_intervals.sql) against scipy, at the rates where
rounding matters: 0 and 1 (the bounds stay in [0, 1]), and in between."""

from __future__ import annotations

import shutil

import pytest
from scipy.stats import binomtest

from rankhouse.paths import MODELS_DIR
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

COUNTS = [(0, 7), (7, 7), (0, 3080), (3080, 3080), (1, 7), (2467, 3080), (20, 40)]
RATES = """-- name: run_measures
-- version: 1
-- stage: evaluate
-- grain: study, system, subset, measure
-- audits:
-- description: Hit rates k/n, one system per (k, n).
SELECT 's' AS study, system, 'all' AS subset, 'Top-1' AS measure, k / n AS value, n AS queries
FROM (VALUES {rows}) AS r (system, k, n)
"""


def test_wilson_bounds_match_scipy_and_stay_in_the_unit_interval(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(MODELS_DIR / "stats" / "wilson_intervals.sql", models)
    rows = ", ".join(f"('{k}/{n}', {k}, {n})" for k, n in COUNTS)
    (models / "run_measures.sql").write_text(RATES.format(rows=rows))
    params = {"wilson_measures": ["Top-1"]}
    with Warehouse(":memory:") as wh:
        wh.open_gate()  # evaluate models (they read no label here)
        project = Project.load(models, params)
        Runner(wh, project, params).run(project.select("+wilson_intervals"))
        found = {system: (low, high) for system, low, high in wh.sql(
            "SELECT system, ci_low, ci_high FROM models.wilson_intervals")}  # fmt: skip
    for k, n in COUNTS:
        interval = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = found[f"{k}/{n}"]
        assert 0.0 <= low <= high <= 1.0
        assert (low, high) == pytest.approx((interval.low, interval.high), abs=1e-7)
    assert found["0/7"][0] == 0.0 and found["7/7"][1] == 1.0
