"""The Python functions SQL models may call, by name: the one registry they are registered on a
connection from.

A model that calls one names it in its header (`-- functions: evidence_greedy`); the runner registers
it on the warehouse's connection just before building that model, importing its module only then, so
that opening a warehouse imports no study's code. Each entry names its Python callable as
"module:attribute" and its DuckDB signature.

    >>> FUNCTIONS["evidence_greedy"].returns
    'VARCHAR[]'
"""

from __future__ import annotations

import importlib
import weakref
from dataclasses import dataclass

import duckdb

from rankhouse.errors import RankhouseError


@dataclass(frozen=True)
class Function:
    """A scalar SQL function implemented in Python: its name, callable and DuckDB signature."""

    name: str
    target: str  # "module:attribute"
    parameters: tuple[str, ...]
    returns: str
    description: str

    def load(self):  # noqa: ANN201 - any callable
        """The Python callable (its module imported on first use)."""
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


FUNCTIONS = {
    function.name: function
    for function in (
        Function(
            "evidence_greedy",
            "rankhouse.select:greedy_udf",
            ("VARCHAR[]", "DOUBLE[][]", "DOUBLE[][]", "INTEGER", "VARCHAR"),
            "VARCHAR[]",
            "seed 000's greedy facet-coverage selection: (doc_ids, gains per facet, pair penalties, budget, "
            "program SHA-256) -> the selected doc_ids in selection order",
        ),
        Function(
            "semantic_chunks",
            "rankhouse.chunking:chunks_udf",
            ("VARCHAR", "INTEGER", "INTEGER"),
            "STRUCT(start INTEGER, length INTEGER)[]",
            "seed 002's semantic chunker: (text, size, overlap) -> the chunks' 0-based starts and lengths in "
            "characters, cut at sentence and paragraph boundaries",
        ),
    )
}


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
            raise RankhouseError(f"no SQL function {name!r} in rankhouse.functions; known: {', '.join(FUNCTIONS)}")
        if name in done:
            continue
        function = FUNCTIONS[name]
        try:
            con.create_function(
                name, function.load(), list(function.parameters), function.returns, null_handling="special",
                side_effects=False,
            )  # fmt: skip
        except duckdb.NotImplementedException as exc:  # registered on this connection by someone else
            if "already created" not in str(exc):
                raise
        done.add(name)


_registered: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]] = weakref.WeakKeyDictionary()
