"""The Python functions SQL models may call, by name: the one registry they are registered on a
connection from.

A model that calls one names it in its header (`-- functions: evidence_greedy`); the runner registers
it on the warehouse's connection just before building that model, importing its module only then, so
that opening a warehouse imports no study's code. Each entry names its Python callable as
"module:attribute" and its DuckDB signature; a study package registers its own (rankhouse/registry.py).

    >>> FUNCTIONS["evidence_greedy"].returns
    'VARCHAR[]'
"""

from __future__ import annotations

import weakref

import duckdb

from rankhouse.errors import RankhouseError
from rankhouse.registry import Function, View

FUNCTIONS = View(Function)  # every registered function, by name (rankhouse/registry.py)


def register(con: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> None:
    """Register the named functions on a connection (a no-op for those it already has).

    Which functions a connection has is remembered here, not looked up in duckdb_functions(): that
    catalog scan takes milliseconds (docs/performance.md), and the runner calls this before every model it
    builds.
    """
    if not names:
        return
    done = _registered.setdefault(con, set())
    for name in names:
        if name not in FUNCTIONS:
            raise RankhouseError(f"no SQL function {name!r} is registered; known: {', '.join(FUNCTIONS)}")
        if name in done:
            continue
        function = FUNCTIONS[name]
        try:
            con.create_function(
                name, function.load(), list(function.parameters), function.returns, null_handling="special",
                side_effects=False, type="arrow" if function.arrow else "native",
            )  # fmt: skip
        except duckdb.NotImplementedException as exc:  # registered on this connection by someone else
            if "already created" not in str(exc):
                raise
        done.add(name)


_registered: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]] = weakref.WeakKeyDictionary()
