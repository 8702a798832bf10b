"""What a model's SQL reads and its canonical text, for given parameters: computed once, kept between processes.

A model's dependencies (the DAG) and its fingerprint both come from its SQL rendered with its parameters
(jinja2) and parsed (sqlglot): for a study's fifty models a tenth of a second, and as much again to import
the two. Neither can change unless what they are computed from does, so `analysed(model, params)` keeps
them in the user's cache, beside the compiled templates (default_cache_dir()/models/), one small JSON file
per model and parameters, named by the SHA-256 of all they are computed from:

- the model's name, template (its SQL and jinja2), raw parameters and the values of its declared
  parameters (its header defaults overridden by `params`);
- every macro file (sql/macros/*.sql), which renders into the SQL;
- rankhouse's code (its modules' sizes and modification times: the renderer, the parser's checks, the
  measure registry's filters, ...), its version, Python's, jinja2's and sqlglot's.

So a change of any of them is a new name, computed afresh: an entry is never stale, only unused. An entry
that cannot be read, is not what this module writes, or names another key is ignored and written again;
a cache folder that cannot be written only loses the cache. A model whose SQL is refused (by the sandbox,
the parser or the checks of dag.py) is never kept: it is refused again on every load. The entries are
rankhouse's own, as the compiled templates are: the gate's threat model (docs/gate.md) counts writing them
by hand with editing rankhouse.

    >>> sorted(analysed(Project.load(closure=["measure_requests"]).models["measure_requests"], {}).references)
    ['raw.measure_requests']
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import rankhouse
from rankhouse.paths import PACKAGE, SQL_DIR, default_cache_dir
from rankhouse.warehouse.catalog import Model, effective_parameters

FORMAT = 1  # of an entry; a new format is a new key
DEPENDENCIES = ("jinja2", "sqlglot")  # the packages that render and parse a model
_memory: dict[str, Analysis] = {}  # this process's analyses, by key


@dataclass(frozen=True)
class Analysis:
    """A model's SQL as rendered with its parameters: the tables it reads (`schema.table`, lower case; its
    header's depends_on aside) and its canonical text (render.canonical_sql: for its fingerprint)."""

    references: frozenset[str]
    canonical: str


def analysed(model: Model, params: dict | None) -> Analysis:
    """The analysis of `model` rendered with `params` (its declared parameters' values, the header's where
    not given): from this process's memory, else from the cache, else rendered, parsed and checked (and
    kept). A refused model raises its ModelError."""
    values = effective_parameters(model, params)
    key = entry_key(model, values)
    found = _memory.get(key) or _read(key)
    if found is None:
        found = _compute(model, values)
        _write(key, found)
    _memory[key] = found
    return found


def entry_key(model: Model, values: dict) -> str:
    """The SHA-256 that names the entry of `model` rendered with its parameters' `values`."""
    given = {"format": FORMAT, "code": code_signature(), "name": model.name, "template": model.template,
             "raw": list(model.raw), "parameters": values}  # fmt: skip
    return hashlib.sha256(json.dumps(given, sort_keys=True, default=repr).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def code_signature() -> str:
    """What rankhouse's analysis of a model depends on besides the model: the macros' text, rankhouse's
    code (each module's path, size and modification time), its version and those of Python, jinja2 and
    sqlglot (their installed metadata's names and their modules' sizes and times). Taken once per process."""
    parts = [rankhouse.__version__, sys.version]
    for path in sorted((SQL_DIR / "macros").glob("*.sql")):
        parts.append(f"{path.name}\n{path.read_text(encoding='utf-8')}")
    parts += _files(PACKAGE)
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        if origin is None:
            parts.append(f"{name}: none")
            continue
        site = origin.parent.parent
        parts += sorted(entry for entry in os.listdir(site) if entry.lower().startswith(f"{name}-"))
        parts += _files(origin.parent)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _files(folder: Path) -> list[str]:
    """`path size mtime` of every Python module below `folder`."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(n for n in names if n.endswith(".py")):
            stat = os.stat(os.path.join(root, name))
            found.append(f"{os.path.join(root, name)} {stat.st_size} {stat.st_mtime_ns}")
    return found


def cache_folder() -> Path:
    """Where the entries are: default_cache_dir()/models."""
    return default_cache_dir() / "models"


def _read(key: str) -> Analysis | None:
    """The entry named `key`, if it is one this module wrote for that key (anything else is ignored)."""
    try:
        data = json.loads((cache_folder() / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (
        isinstance(data, dict)
        and data.get("key") == key
        and isinstance(data.get("canonical"), str)
        and isinstance(data.get("references"), list)
        and all(isinstance(ref, str) for ref in data["references"])
    ):
        return None
    return Analysis(frozenset(data["references"]), data["canonical"])


def _write(key: str, analysis: Analysis) -> None:
    """Keep an entry (written whole, then renamed into place); a folder that cannot be written is no error."""
    folder = cache_folder()
    entry = {"key": key, "references": sorted(analysis.references), "canonical": analysis.canonical}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(entry, out)
            os.replace(temporary, folder / f"{key}.json")
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass


def _compute(model: Model, values: dict) -> Analysis:
    """Render the model with its parameters' `values`, parse and check it (dag.table_references)."""
    from rankhouse.warehouse.dag import table_references
    from rankhouse.warehouse.render import canonical_sql, parse, render

    tree = parse(model, render(model, values))
    return Analysis(frozenset(table_references(model, tree)), canonical_sql(tree))
