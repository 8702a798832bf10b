"""The registry of Python functions that models call (rankhouse/functions.py)."""

from __future__ import annotations

import duckdb
import pytest

from rankhouse.errors import RankhouseError
from rankhouse.functions import FUNCTIONS, register


def _count(con: duckdb.DuckDBPyConnection, name: str) -> int:
    return con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [name]).fetchall()[0][0]


def test_register_adds_a_function_once_per_connection():
    first, second = duckdb.connect(), duckdb.connect()
    register(first, ("evidence_greedy",))
    register(first, ("evidence_greedy",))
    assert _count(first, "evidence_greedy") == 1
    assert _count(second, "evidence_greedy") == 0  # each connection gets its own registration
    register(second, ("evidence_greedy",))
    assert _count(second, "evidence_greedy") == 1


def test_register_accepts_a_function_the_connection_already_has_from_elsewhere():
    con = duckdb.connect()
    function = FUNCTIONS["evidence_greedy"]
    con.create_function(function.name, function.load(), list(function.parameters), function.returns)
    register(con, ("evidence_greedy",))
    assert _count(con, "evidence_greedy") == 1


def test_register_refuses_an_unknown_name_and_lists_the_known_ones():
    known = ", ".join(sorted(FUNCTIONS))
    assert {"bm25_full_ranking", "ranked_cosines", "evidence_greedy", "semantic_chunks"} <= set(FUNCTIONS)
    with pytest.raises(RankhouseError, match=f"no SQL function 'nope' is registered; known: {known}"):
        register(duckdb.connect(), ("nope",))


def test_a_functions_code_is_part_of_the_fingerprints_of_the_models_that_call_it(tmp_path, monkeypatch):
    """A table a Python function computed is rebuilt when the function's code changes (its module, or a
    module of its package it imports), as when the model's SQL does; a model that calls no function keeps
    its fingerprint, and code elsewhere (the runner, the loaders) is not part of it."""
    from model_files import model

    from rankhouse import functions, registry
    from rankhouse.registry import Function
    from rankhouse.warehouse import Warehouse
    from rankhouse.warehouse.dag import Project
    from rankhouse.warehouse.runner import Runner

    package = tmp_path / "code" / "mine"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("def scale(x):\n    return 2 * x\n")
    (package / "udf.py").write_text(
        "from mine.helper import scale\nimport json\n\ndef doubled(x):\n    return scale(x)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    registry.register(Function("mine_doubled", "mine.udf:doubled", ("DOUBLE",), "DOUBLE", "doubles"), origin="mine")
    models = tmp_path / "models"
    model(models, "runs", "SELECT run_id, score FROM raw.runs")
    model(models, "doubled", "SELECT run_id, mine_doubled(score) AS score FROM models.runs",
          extra="-- functions: mine_doubled")  # fmt: skip

    def fingerprints() -> tuple[str, str]:
        functions._sources.cache_clear()
        project = Project.load(models)
        with Warehouse(":memory:") as wh:
            runner = Runner(wh, project, project.params)
            return runner.fingerprint("runs"), runner.fingerprint("doubled")

    try:
        assert sorted(functions._sources("mine.udf")) == ["mine.helper", "mine.udf"]  # not json
        runs, doubled = fingerprints()
        assert fingerprints() == (runs, doubled)
        (package / "helper.py").write_text("def scale(x):\n    return 3 * x\n")
        assert fingerprints()[0] == runs and fingerprints()[1] != doubled
        changed = fingerprints()[1]
        (package / "udf.py").write_text((package / "udf.py").read_text() + "# a comment is code too\n")
        assert fingerprints() == (runs, fingerprints()[1]) and fingerprints()[1] not in (doubled, changed)
    finally:
        registry.forget("mine")
        functions._sources.cache_clear()


def test_the_full_rankings_functions_code_is_their_modules():
    from rankhouse import functions

    # their own modules and rankhouse/arrays.py, which imports no rankhouse module: not the loaders or the warehouse
    assert sorted(functions._sources("rankhouse.bm25")) == ["rankhouse.arrays", "rankhouse.bm25", "rankhouse.ranking"]
    assert sorted(functions._sources("rankhouse.ranking")) == ["rankhouse.arrays", "rankhouse.ranking"]
    assert functions.code_digest("bm25_full_ranking") != functions.code_digest("ranked_cosines")
