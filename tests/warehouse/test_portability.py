"""Every model transpiles to Spark SQL, and constructs that translate wrongly are rejected."""

from __future__ import annotations

import pytest
from model_files import model

from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.portability import portability_problems, to_spark

PROJECT = Project.load()


@pytest.mark.parametrize("name", sorted(PROJECT.models))
def test_model_is_portable_to_spark(name):
    model = PROJECT.models[name]
    assert portability_problems(model) == []
    if not (model.dialect or "").lower().startswith("duckdb"):  # an exempt model may use what Spark lacks
        assert to_spark(model).strip()


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("log(score)", "bare log"),
        ("list(docno ORDER BY score)", "collect_list keeps no order"),
        ("hash(docno)", "hash()"),
    ],
)
def test_constructs_that_translate_wrongly_are_rejected(tmp_path, expression, problem):
    model(tmp_path, "risky", f"SELECT run_id, {expression} AS x FROM raw.runs GROUP BY run_id, score, docno")
    risky = Project.load(tmp_path).models["risky"]
    assert any(problem in p for p in portability_problems(risky))


def test_explicit_logs_are_fine(tmp_path):
    model(tmp_path, "fine", "SELECT run_id, ln(score) AS a, log10(score) AS b, log2(score) AS c FROM raw.runs")
    assert portability_problems(Project.load(tmp_path).models["fine"]) == []


def test_a_model_marked_duckdb_only_is_exempt(tmp_path):
    model(tmp_path, "native", "SELECT run_id, hash(docno) AS h FROM raw.runs",
          extra="-- dialect: duckdb: needs DuckDB's hash for a demonstration")  # fmt: skip
    assert portability_problems(Project.load(tmp_path).models["native"]) == []
