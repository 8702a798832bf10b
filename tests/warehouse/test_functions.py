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
    known = "bm25_full_ranking, ranked_scores, evidence_greedy"  # the core's, then the studies'
    with pytest.raises(RankhouseError, match=f"no SQL function 'nope' is registered; known: {known}"):
        register(duckdb.connect(), ("nope",))
