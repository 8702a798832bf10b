"""Freezes: canonical table hashes and immutable freeze files.

Canonical export of a table (what its SHA-256 is taken over), so that anyone can recompute it:
- rows sorted by the model's grain, then by every column, ascending, NULLs last;
- one line per row, lines joined by a newline (no newline after the last);
- the columns in table order, joined by a tab; a NULL is written `\\N`;
- floating-point numbers (FLOAT, DOUBLE, DECIMAL) with 12 significant digits, C's `%.12g`, so that
  the last bits of a parallel sum cannot change a hash; lists and arrays as `[a,b,...]` of their
  elements written the same way; booleans as `true`/`false`; integers in decimal;
- text as is, except `\\` -> `\\\\`, tab -> `\\t`, newline -> `\\n`;
- the lines are cut into chunks of 100,000 (the last may be shorter); the digest is the SHA-256 of
  the chunks' SHA-256 hex digests joined by newlines (so that chunks hash in parallel). An empty
  table has one empty chunk.

A freeze file, `<freezes>/<study>-<n>.json`, is created exclusively (linked into place, so it is
complete or absent, and never overwritten); `meta.freezes` mirrors the files and keeps each file's
hash, so that an edited file shows.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.warehouse.connection import Warehouse

FLOATS = re.compile(r"^(FLOAT|DOUBLE|REAL|DECIMAL.*)$")
CHUNK = 100_000
CANONICAL_EXPORT = (
    "rows sorted by grain then every column; tab-separated columns in table order; NULL as \\N; "
    "floats as %.12g; lists as [a,b]; booleans true/false; text with \\\\, \\t, \\n escaped; "
    "lines joined by newline in chunks of 100000; SHA-256 of the newline-joined chunk SHA-256s"
)


def _cell(column: str, kind: str) -> str:
    """SQL text for one column of the canonical export."""
    quoted = f'"{column}"'
    element = re.match(r"^(.*?)(\[\d*\])$", kind)
    if element:
        inner = "printf('%.12g', x)" if FLOATS.match(element.group(1)) else "CAST(x AS VARCHAR)"
        elements = f"list_transform(CAST({quoted} AS {element.group(1)}[]), lambda x: {inner})"
        text = f"'[' || array_to_string({elements}, ',') || ']'"
    elif FLOATS.match(kind):
        text = f"printf('%.12g', {quoted})"
    elif kind == "BOOLEAN":
        text = f"CASE WHEN {quoted} THEN 'true' ELSE 'false' END"
    elif kind == "VARCHAR":
        text = f"replace(replace(replace({quoted}, '\\', '\\\\'), chr(9), '\\t'), chr(10), '\\n')"
    else:
        text = f"CAST({quoted} AS VARCHAR)"
    return f"coalesce({text}, '\\N')"


def table_digest(wh: Warehouse, table: str, grain: tuple[str, ...] = ()) -> tuple[str, int]:
    """(SHA-256 of the table's canonical export, row count)."""
    described = wh.sql(f"DESCRIBE SELECT * FROM {table}")
    columns = [(name, kind) for name, kind, *_ in described]
    line = " || chr(9) || ".join(_cell(name, kind) for name, kind in columns)
    order = ", ".join([*(f'"{g}"' for g in grain), *(f'"{name}"' for name, _ in columns)])
    digest, rows = wh.sql(
        f"""
        WITH lines AS (
            SELECT {line} AS line, row_number() OVER (ORDER BY {order} NULLS LAST) - 1 AS position
            FROM {table}
        ),
        chunks AS (
            SELECT position // {CHUNK} AS chunk, sha256(string_agg(line, chr(10) ORDER BY position)) AS digest
            FROM lines
            GROUP BY chunk
        )
        SELECT sha256(coalesce(string_agg(digest, chr(10) ORDER BY chunk), sha256(''))),
               (SELECT count(*) FROM {table})
        FROM chunks
        """
    )[0]
    return digest, rows


@dataclass(frozen=True)
class Freeze:
    """A freeze file's content, as read back."""

    freeze_id: str
    study: str
    n: int
    path: Path
    file_sha256: str
    record: dict

    @property
    def supersedes(self) -> str | None:
        return self.record.get("supersedes")

    @property
    def reason(self) -> str | None:
        return self.record.get("reason")


FREEZE_NAME = re.compile(r"^(?P<study>.+)-(?P<n>\d+)\.json$")


def read_freezes(directory: Path, study: str) -> list[Freeze]:
    """Every freeze file of a study, oldest first."""
    found = []
    if directory.exists():
        for path in directory.iterdir():
            match = FREEZE_NAME.match(path.name)
            if match and match.group("study") == study:
                data = path.read_bytes()
                try:
                    record = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise RankhouseError(f"freeze file {path} is not valid JSON: {exc}") from None
                n = int(match.group("n"))
                found.append(Freeze(f"{study}-{n}", study, n, path, hashlib.sha256(data).hexdigest(), record))
    return sorted(found, key=lambda f: f.n)


def write_freeze(directory: Path, study: str, n: int, record: dict) -> Freeze:
    """Create `<directory>/<study>-<n>.json`; an existing file is never overwritten (that is an error)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{study}-{n}.json"
    data = (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{study}-{n}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)  # atomic, and fails if the file exists
        except FileExistsError:
            raise RankhouseError(f"freeze file {path} already exists; freeze files are never overwritten") from None
    finally:
        os.unlink(temporary)
    return Freeze(f"{study}-{n}", study, n, path, hashlib.sha256(data).hexdigest(), record)


def mirror_freezes(wh: Warehouse, freezes: list[Freeze]) -> None:
    """Add the freeze files missing from meta.freezes (after a crash between file and row, or on a
    new warehouse). A row is never changed: a file whose hash no longer matches its row was edited."""
    for freeze in freezes:
        if wh.sql("SELECT 1 FROM meta.freezes WHERE freeze_id = ?", [freeze.freeze_id]):
            continue
        with wh.transaction():
            wh.sql(
                "INSERT INTO meta.freezes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    freeze.freeze_id, freeze.study, freeze.n, str(freeze.path), freeze.file_sha256,
                    freeze.record["protocol"]["sha256"], freeze.record["created_at"], freeze.supersedes,
                    freeze.reason,
                ],
            )  # fmt: skip
