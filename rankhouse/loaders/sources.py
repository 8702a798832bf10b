"""Source bookkeeping shared by every loader: file hashes and meta.sources rows.

`read_input` is how the TREC loaders (runs and qrels) read a file: `-` is standard input (shown and
recorded as `<stdin>`), and a file whose name ends in `.gz`, or whose bytes start with gzip's magic
number, is decompressed in Python. The SHA-256 recorded for it is of the bytes as given (the
compressed bytes of a .gz), so that it is the digest `sha256sum` prints and a study protocol lists;
the rows are parsed from the decompressed bytes of that same read, never from a path handed to DuckDB.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rankhouse.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from rankhouse.warehouse import Warehouse

STDIN = "-"  # the path that means standard input
STDIN_SHOWN = "<stdin>"  # how standard input is named in messages and in meta.sources
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class LoadResult:
    """What a load did: `loaded`, `replaced` (same name, new bytes) or `unchanged` (a no-op).

    A replacing load may carry the path and SHA-256 recorded for what it replaced (`previous_path`,
    `previous_sha256`), and then says which.
    """

    table: str
    name: str
    path: str
    sha256: str
    rows: int
    status: str
    previous_path: str | None = None
    previous_sha256: str | None = None

    def __str__(self) -> str:
        if self.status == "unchanged":
            return f"{self.path}: already loaded as {self.name} in {self.table} (same bytes); nothing to do"
        if self.status == "replaced" and self.previous_sha256:
            return (
                f"{self.path}: loaded {self.rows} rows into {self.table} as {self.name}, replacing those loaded "
                f"from {self.previous_path} (sha256 {self.previous_sha256[:12]}..., now {self.sha256[:12]}...)"
            )
        return f"{self.path}: {self.status} {self.rows} rows into {self.table} as {self.name}"


class SourceError(InputError):
    """An input that cannot be read at all: `path: problem` (no line to name)."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(path, 0, problem)
        self.args = (f"{path}: {problem}",)


def read_file(path: str | Path) -> bytes:
    """The bytes of a file, with an error that names it when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, 0, "cannot read the file", exc.strerror or str(exc)) from None


def shown_path(path: str | Path) -> str:
    """A path as messages and meta.sources show it: `<stdin>` for `-`."""
    return STDIN_SHOWN if str(path) == STDIN else str(path)


def check_readable(path: str | Path) -> None:
    """Refuse, naming it, a path that is not a readable file (`-`, standard input, is checked on reading)."""
    if str(path) == STDIN:
        return
    file = Path(path)
    if not file.exists():
        raise SourceError(path, "no such file" + (" (a broken symbolic link)" if file.is_symlink() else ""))
    if file.is_dir():
        raise SourceError(path, "is a directory, not a file")
    if not os.access(file, os.R_OK):
        raise SourceError(path, "cannot be read (permission denied)")


def read_input(path: str | Path) -> tuple[bytes, bytes]:
    """(the bytes as given, the bytes to parse) of a file, or of standard input for `-`.

    The two differ for gzip: a name ending in `.gz` (which must then be gzip) or bytes starting with
    gzip's magic number (standard input, a file named otherwise) are decompressed here. Errors name
    the file: missing, a directory, unreadable, empty standard input, not gzip though named `.gz`,
    a corrupt or truncated gzip stream.
    """
    shown = shown_path(path)
    if str(path) == STDIN:
        if sys.stdin is None or sys.stdin.isatty():
            raise SourceError(shown, "standard input is a terminal, not a file: pipe or redirect the file into it")
        raw = sys.stdin.buffer.read()
        if not raw:
            raise SourceError(shown, "standard input is empty")
    else:
        check_readable(path)
        raw = read_file(path)
    named_gz = str(path).lower().endswith(".gz")
    if not (named_gz or raw.startswith(GZIP_MAGIC)):
        return raw, raw
    if named_gz and not raw.startswith(GZIP_MAGIC):
        raise SourceError(shown, "its name ends in .gz, but it is not gzip-compressed")
    try:
        return raw, gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise SourceError(shown, f"a corrupt or truncated gzip file ({exc})") from None


def plain_file(path: str | Path) -> bool:
    """Whether a TREC input is a file read as it is (not `-`, not gzip by name or by its first bytes),
    which a loader may then parse as it reads it instead of reading it whole first."""
    if str(path) == STDIN or str(path).lower().endswith(".gz"):
        return False
    check_readable(path)
    try:
        with open(path, "rb") as handle:
            return handle.read(len(GZIP_MAGIC)) != GZIP_MAGIC
    except OSError as exc:
        raise InputError(path, 0, "cannot read the file", exc.strerror or str(exc)) from None


class Input:
    """A TREC input to load, read whole at most once (standard input can be read only once).

    >>> Input("tests/fixtures/trec_eval/results.test").plain
    True
    """

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.plain = plain_file(path)
        self._read: tuple[bytes, bytes] | None = None

    def read(self) -> tuple[bytes, bytes]:
        """(the bytes as given, the bytes to parse): read_input's, read once."""
        if self._read is None:
            self._read = read_input(self.path)
        return self._read

    def sha256(self) -> str:
        """The SHA-256 of the bytes as given; a plain file's is streamed from it, never held whole."""
        return sha256_file(self.path) if self.plain and self._read is None else sha256_bytes(self.read()[0])


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path, progress: Callable[[int], None] | None = None) -> str:
    """Hex SHA-256 of a file's bytes, read a MiB at a time; `progress` is told the bytes read so far.

    Example: sha256_file("data/banking77/train.csv", lambda done: print(done))
    """
    digest, done = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            done += len(block)
            if progress is not None:
                progress(done)
    return digest.hexdigest()


def loaded_sha(wh: Warehouse, meta: str, table: str, name: str) -> str | None:
    """The SHA-256 recorded for (table, name) in a meta.sources table, if any."""
    rows = wh.sql(f"SELECT sha256 FROM {meta} WHERE table_name = ? AND name = ?", [table, name])
    return rows[0][0] if rows else None


def loaded_source(wh: Warehouse, meta: str, table: str, name: str) -> tuple[str, str] | None:
    """(path, SHA-256) recorded for (table, name) in a meta.sources table, if any."""
    rows = wh.sql(f"SELECT path, sha256 FROM {meta} WHERE table_name = ? AND name = ?", [table, name])
    return (rows[0][0], rows[0][1]) if rows else None


_EXPECTED: ContextVar[tuple[str, str] | None] = ContextVar("expected_sha256", default=None)


@contextmanager
def expecting(sha256: str, shown: str) -> Iterator[None]:
    """Within the block, a load must record `sha256` for the bytes it parsed (a study's input: the
    protocol's SHA-256), or it is refused by record_source inside its own transaction, so that nothing
    is written: the bytes a loader hashes are the bytes it parses, and a file that changed since the
    protocol was written (or while it was read) never enters the warehouse.

    >>> with expecting("69019319...", "results.test"):  # doctest: +SKIP
    ...     load_run(wh, "results.test")
    """
    token = _EXPECTED.set((sha256, shown))
    try:
        yield
    finally:
        _EXPECTED.reset(token)


def writes_inputs(load: Callable[..., LoadResult]) -> Callable[..., LoadResult]:
    """A loader of label-free inputs writes the warehouse's inputs (Warehouse.writing_inputs: a file
    warehouse's inputs are written on a building copy, published when the load is done)."""

    @functools.wraps(load)
    def loading(wh: Warehouse, *args: object, **kwargs: object) -> LoadResult:
        with wh.writing_inputs():
            return load(wh, *args, **kwargs)

    return loading


def record_source(
    wh: Warehouse, meta: str, table: str, name: str, path: str | Path, sha: str, rows: int, loader: str
) -> None:
    """Insert or replace the meta.sources row of (table, name); call inside the load's transaction. A
    load that was expected to have other bytes (expecting) is refused here, before it commits."""
    expected = _EXPECTED.get()
    if expected is not None and sha != expected[0]:
        raise InputError(
            expected[1], 0, f"the bytes read have SHA-256 {sha}, the protocol expects {expected[0]}",
            "the file changed since the protocol was written, or while it was read; nothing was loaded",
        )  # fmt: skip
    if meta == "meta.sources":
        wh.guard_source(table, name, sha)
    wh.sql(f"DELETE FROM {meta} WHERE table_name = ? AND name = ?", [table, name])
    wh.sql(
        f"INSERT INTO {meta} VALUES (?, ?, ?, ?, ?, ?, current_localtimestamp())",
        [table, name, str(path), sha, rows, loader],
    )


def replace_named_rows(
    wh: Warehouse, table: str, key_column: str, name: str, rows: pa.Table,
    meta: str, source_table: str, path: str | Path, sha: str, loader: str,
) -> None:  # fmt: skip
    """One transaction: `table`'s rows whose `key_column` is `name` replaced by `rows` (its columns in
    the table's order), and the source recorded in `meta` under `source_table`."""
    with wh.registered("rh_replacement", rows):
        with wh.transaction():
            wh.sql(f"DELETE FROM {table} WHERE {key_column} = ?", [name])
            wh.sql(f"INSERT INTO {table} SELECT * FROM rh_replacement")
            record_source(wh, meta, source_table, name, path, sha, rows.num_rows, loader)
