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

import ast
import functools
import hashlib
import importlib.util
import weakref
from pathlib import Path

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
            raise RankhouseError(f"no SQL function {name!r} is registered; known: {', '.join(sorted(FUNCTIONS))}")
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


def code_digest(name: str) -> str:
    """SHA-256 of the Python source behind the function `name`: its module's file and the files of the
    modules of its own package that it imports at its top level, transitively (parsed, not imported). A
    model's fingerprint includes it for each function the model calls, so that a table a Python function
    computed is rebuilt, and a freeze of it refused, when that code changes, as when the model's SQL does.
    The rest of rankhouse (the runner, the loaders) is not part of it: an upgrade that leaves the
    function's code alone leaves its tables and freezes valid.

    >>> len(code_digest("bm25_full_ranking"))
    64
    """
    if name not in FUNCTIONS:
        raise RankhouseError(f"no SQL function {name!r} is registered; known: {', '.join(sorted(FUNCTIONS))}")
    digest = hashlib.sha256()
    for module, source in sorted(_sources(FUNCTIONS[name].target.partition(":")[0]).items()):
        digest.update(f"{module}\0{len(source)}\0".encode())
        digest.update(source)
    return digest.hexdigest()


@functools.cache
def _sources(module: str) -> dict[str, bytes]:
    """The source bytes of `module` and of the modules of its package it imports at its top level,
    transitively, by module name."""
    package = module.rpartition(".")[0]
    sources: dict[str, bytes] = {}
    waiting = [module]
    while waiting:
        current = waiting.pop()
        if current in sources:
            continue
        spec = importlib.util.find_spec(current)
        if current != module and (spec is None or spec.origin is None):
            continue  # a name imported from the package, not a module
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            raise RankhouseError(f"the Python source of module {current!r} cannot be found")
        sources[current] = Path(spec.origin).read_bytes()
        waiting += [found for found in _top_level_imports(sources[current], package)
                    if found.rpartition(".")[0] == package]  # fmt: skip
    return sources


def _top_level_imports(source: bytes, package: str) -> list[str]:
    """The modules a module's top-level statements import, as absolute names (`package`: the module's
    package, where its relative imports start); `from x import y` names both x and x.y, one of which is a
    module. Imports inside functions or under `if TYPE_CHECKING:` are not followed."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{parent}.{base}" if node.module else parent
            found += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return found
