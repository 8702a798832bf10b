"""Source bookkeeping shared by every loader: file hashes and meta.sources rows.

`Input` is how the TREC loaders (runs and qrels) read a file, once and in blocks, so that an input of any
size is never held whole: `-` is standard input (shown and recorded as `<stdin>`), and a file whose name
ends in `.gz`, or whose bytes start with gzip's magic number, is decompressed in Python. The SHA-256
recorded for it is of the bytes as given (the compressed bytes of a .gz), so that it is the digest
`sha256sum` prints and a study protocol lists. A plain file is parsed as it is read and hashed on the way;
standard input and gzip are read once, hashed as they are read, into a private copy of the bytes to parse
(in the warehouse's scratch folder, deleted after the load), which the loader then parses: the rows always
come from the bytes that were hashed, never from a path handed to DuckDB.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

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


BLOCK = 1 << 20  # bytes read at a time from an input that is copied (standard input, gzip)


class HashingReader:
    """A binary stream read through, every byte read hashed (SHA-256; not with hashed=False).

    >>> import io
    >>> reader = HashingReader(io.BytesIO(b"abc"))
    >>> reader.read(2), reader.read(), reader.sha256[:12]
    (b'ab', b'c', 'ba7816bf8f01')
    """

    def __init__(self, stream: BinaryIO, head: bytes = b"", hashed: bool = True) -> None:
        self._stream = stream
        self._head = head  # bytes already read from `stream` (and hashed here), to be read first
        self._digest = hashlib.sha256(head) if hashed else None

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all that is left if `size` < 0)."""
        if self._head:
            if 0 <= size < len(self._head):
                chunk, self._head = self._head[:size], self._head[size:]
                return chunk
            chunk, self._head = self._head, b""
            return chunk + (self.read(size - len(chunk)) if size < 0 or size > len(chunk) else b"")
        chunk = self._stream.read(size)
        if self._digest is not None:
            self._digest.update(chunk)
        return chunk

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the bytes read so far."""
        assert self._digest is not None, "a reader that does not hash"
        return self._digest.hexdigest()

    @property
    def closed(self) -> bool:
        return self._stream.closed

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> HashingReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def copy_input(path: str | Path, folder: Path) -> tuple[Path, str]:
    """(a private copy of the bytes to parse, the SHA-256 of the bytes as given) of standard input (`-`)
    or a gzip file, read once, a block at a time: the copy, in `folder`, is decompressed where the input
    is gzip (a name ending in `.gz`, which must then be gzip, or bytes starting with gzip's magic number).
    Errors name the input: missing, a directory, unreadable, a terminal or empty standard input, not gzip
    though named `.gz`, a corrupt or truncated gzip stream; no copy is left behind then.
    """
    shown, stdin = shown_path(path), str(path) == STDIN
    if stdin and (sys.stdin is None or sys.stdin.isatty()):
        raise SourceError(shown, "standard input is a terminal, not a file: pipe or redirect the file into it")
    if not stdin:
        check_readable(path)
    folder.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix="input-", suffix=".txt", dir=folder)  # readable by this user alone
    copy = Path(name)
    try:
        with open(handle, "wb") as out, nullcontext(sys.stdin.buffer) if stdin else open(path, "rb") as stream:
            sha = _copy(stream, out, shown, named_gz=str(path).lower().endswith(".gz"), stdin=stdin)
    except OSError as exc:
        copy.unlink(missing_ok=True)
        raise InputError(shown, 0, "cannot read the file", exc.strerror or str(exc)) from None
    except BaseException:
        copy.unlink(missing_ok=True)
        raise
    return copy, sha


def _copy(stream: BinaryIO, out: BinaryIO, shown: str, named_gz: bool, stdin: bool) -> str:
    """Copy `stream` into `out` a block at a time (decompressed if it is gzip); the SHA-256 of `stream`'s bytes."""
    head = stream.read(BLOCK)
    if stdin and not head:
        raise SourceError(shown, "standard input is empty")
    if named_gz and not head.startswith(GZIP_MAGIC):
        raise SourceError(shown, "its name ends in .gz, but it is not gzip-compressed")
    reader = HashingReader(stream, head)
    source: BinaryIO | gzip.GzipFile = reader
    if head.startswith(GZIP_MAGIC):
        source = gzip.GzipFile(fileobj=reader, mode="rb")  # every member, as gzip.decompress reads them
    try:
        while block := source.read(BLOCK):
            out.write(block)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise SourceError(shown, f"a corrupt or truncated gzip file ({exc})") from None
    while reader.read(BLOCK):  # hash every byte, even past what the decompressor needed
        pass
    return reader.sha256


def plain_file(path: str | Path) -> bool:
    """Whether a TREC input is a file read as it is (not `-`, not gzip by name or by its first bytes),
    which a loader parses as it reads it instead of copying it first."""
    if str(path) == STDIN or str(path).lower().endswith(".gz"):
        return False
    check_readable(path)
    try:
        with open(path, "rb") as handle:
            return handle.read(len(GZIP_MAGIC)) != GZIP_MAGIC
    except OSError as exc:
        raise InputError(path, 0, "cannot read the file", exc.strerror or str(exc)) from None


class Input:
    """A TREC input to load, read once whatever its size: a plain file is parsed as it is read (its
    reader hashes it on the way: `open` and `sha256_of`); standard input and gzip are copied once into a
    private file in `scratch` (the bytes to parse, decompressed; hashed as they are read), which `open`
    then reads and `close` deletes. Use it as a context manager.

    >>> Input("tests/fixtures/trec_eval/results.test").plain
    True
    """

    def __init__(self, path: str | Path, scratch: Path | None = None) -> None:
        self.path = path
        self.plain = plain_file(path)
        self._scratch = scratch
        self._copy: tuple[Path, str] | None = None

    def __enter__(self) -> Input:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _copied(self) -> tuple[Path, str]:
        if self._copy is None:
            self._copy = copy_input(self.path, self._scratch or Path(tempfile.gettempdir()))
        return self._copy

    def sha256(self) -> str:
        """The SHA-256 of the bytes as given: a plain file's streamed from it, another's from its one read."""
        return sha256_file(self.path) if self.plain else self._copied()[1]

    def open(self) -> HashingReader:
        """The bytes to parse, from their start; a plain file's hashed as they are read (sha256_of)."""
        if self.plain:
            return HashingReader(open(self.path, "rb"))  # noqa: SIM115
        return HashingReader(open(self._copied()[0], "rb"), hashed=False)  # noqa: SIM115

    def sha256_of(self, reader: HashingReader) -> str:
        """The SHA-256 of the bytes as given, parsed through `reader` (which read them all): a plain file's
        is the reader's own, a copied input's that of its one read."""
        return reader.sha256 if self.plain else self._copied()[1]

    def close(self) -> None:
        """Delete the private copy, if one was made."""
        if self._copy is not None:
            self._copy[0].unlink(missing_ok=True)
            self._copy = None


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
