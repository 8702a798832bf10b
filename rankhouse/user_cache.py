"""Entries rankhouse keeps between processes in the user's cache (paths.default_cache_dir(), beside the
compiled templates): what a command would otherwise compute again from things that rarely change (a
model's analysis: warehouse/analysis.py; a seeded plan's digest: resample.py).

An entry is a small JSON file, `<folder>/<key>.json`, whose key is the SHA-256 of everything it is computed
from, so that it is never stale, only unused; `code_signature` stands for rankhouse's code and the packages
it names. An entry is written whole (then renamed into place); one that cannot be read, is not JSON or does
not name its own key is ignored (the caller computes it again and writes it anew), and a cache folder that
cannot be written only loses the cache.

    >>> write_entry("plans", "ab" * 32, {"digest": "..."}); read_entry("plans", "ab" * 32)  # doctest: +SKIP
    {'key': 'abab...', 'digest': '...'}
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

import rankhouse
from rankhouse.paths import PACKAGE, default_cache_dir


@functools.cache
def code_signature(*packages: str) -> str:
    """rankhouse's code (each module's path, size and modification time), its version, Python's, and each of
    `packages` (the names of its installed metadata, which hold its version, and its `__init__.py`'s size and
    time): taken once per process."""
    parts = [rankhouse.__version__, sys.version, *_files(PACKAGE)]
    for name in packages:
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        if origin is None:
            parts.append(f"{name}: none")
            continue
        parts += sorted(entry for entry in os.listdir(origin.parent.parent) if entry.lower().startswith(f"{name}-"))
        stat = os.stat(origin)
        parts.append(f"{origin} {stat.st_size} {stat.st_mtime_ns}")
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


def key_of(given: dict) -> str:
    """The SHA-256 of `given` (JSON, keys sorted): an entry's key."""
    return hashlib.sha256(json.dumps(given, sort_keys=True, default=repr).encode()).hexdigest()


def folder_of(name: str) -> Path:
    """The cache folder `name` (default_cache_dir()/<name>)."""
    return default_cache_dir() / name


def read_entry(folder: str, key: str) -> dict | None:
    """The entry `key` of `folder`, if it is a JSON object that names that key; else None."""
    try:
        data = json.loads((folder_of(folder) / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("key") == key else None


def write_entry(folder: str, key: str, data: dict) -> None:
    """Keep `data` as the entry `key` of `folder` (written whole, then renamed into place)."""
    where = folder_of(folder)
    try:
        where.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=where, prefix=f".{key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"key": key, **data}, out)
            os.replace(temporary, where / f"{key}.json")
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass
