"""Freezes: everything that makes or verifies one. Canonical table hashes and row digests, immutable
chained freeze files, a study's snapshot (what a freeze records), `freeze` and `verify`, and the report
of what changed since a freeze.

Canonical export of a table (what its SHA-256 is taken over), so that anyone can recompute it:
- rows sorted by the model's grain, then by every column, ascending, NULLs last;
- one line per row, lines joined by a newline (no newline after the last);
- the columns in table order, joined by a tab; a NULL is written `\\N`;
- numbers exactly: DuckDB's text of the value (for FLOAT and DOUBLE the shortest text that reads back
  as the same bits, e.g. 0.30000000000000004; for DECIMAL every digit); lists and arrays as `[a,b,...]`
  of their elements written the same way; booleans as `true`/`false`; integers in decimal;
- text as is, except `\\` -> `\\\\`, tab -> `\\t`, newline -> `\\n`;
- the lines are cut into chunks of 100,000 (the last may be shorter); the digest is the SHA-256 of
  the chunks' SHA-256 hex digests joined by newlines (DuckDB sorts and writes the lines, Python
  hashes each chunk as it streams out). An empty table has one empty chunk.
Row digest (`quick` in a freeze's table entry), taken with the canonical SHA-256 when a table is frozen:
the SHA-256 of the column names and types, the row count, and the exact sum and the bitwise xor of
DuckDB's 64-bit hash of every row (one scan, no sort: a fraction of the canonical export's time, as
measured in docs/performance.md). Verifying a freeze (study status, evaluate, a query's labels)
takes the row digest again: the same digest, from the DuckDB version that took it, means the rows the
canonical SHA-256 was taken over; any other digest (or another DuckDB version, whose hash may differ)
takes the canonical export again, which decides. A row digest taken before, of the very DuckDB file
that holds the table now (its path, inode, size and times: digests.py), is not taken again. `--full`
takes every row digest and the canonical export of every table afresh.
The row digest is not a cryptographic hash: it finds any edit, not a forgery built against DuckDB's
hash function; the canonical SHA-256 stays the freeze's record.
Older freezes wrote floating-point numbers with 12 significant digits (their `canonical_export`
says `%.12g`, CANONICAL_EXPORT_12G); they are verified the way they were written.

A freeze file, `<freezes>/<study>-<n>.json`, is created exclusively (linked into place, so it is
complete or absent, and never overwritten), inside the transaction that records it in
`meta.freezes` with the file's SHA-256. The files form a chain: freeze n > 1 names the freeze it
supersedes (n - 1), why, and that file's SHA-256. A warehouse trusts only the freeze files it
recorded itself: a file without its row (hand-placed, or its row deleted), a row without its file, an
edited file and a broken chain are errors.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

import rankhouse
from rankhouse.errors import FreezeError, RankhouseError
from rankhouse.study.digests import RowDigests, row_digest_and_count
from rankhouse.study.protocol import Protocol, shown
from rankhouse.warehouse.connection import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.layout import LAYOUT_VERSION
from rankhouse.warehouse.runner import Runner, model_objects, object_kind, user_functions

if TYPE_CHECKING:  # Arrow and NumPy are imported by the canonical export, which a verification seldom takes
    import pyarrow as pa

FLOATS = re.compile(r"^(FLOAT|DOUBLE|REAL|DECIMAL.*)$")
CHUNK = 100_000
CANONICAL_EXPORT = (
    "rows sorted by grain then every column; tab-separated columns in table order; NULL as \\N; "
    "numbers exactly as DuckDB writes them (shortest round-trip text for floats); lists as [a,b]; "
    "booleans true/false; text with \\\\, \\t, \\n escaped; lines joined by newline in chunks of 100000; "
    "SHA-256 of the newline-joined chunk SHA-256s"
)
CANONICAL_EXPORT_12G = (
    "rows sorted by grain then every column; tab-separated columns in table order; NULL as \\N; "
    "floats as %.12g; lists as [a,b]; booleans true/false; text with \\\\, \\t, \\n escaped; "
    "lines joined by newline in chunks of 100000; SHA-256 of the newline-joined chunk SHA-256s"
)


def _number(expression: str, kind: str, exact: bool) -> str:
    """A number as canonical text: DuckDB's exact text, or (old freezes) floats with %.12g."""
    if not exact and FLOATS.match(kind):
        return f"printf('%.12g', {expression})"
    return f"CAST({expression} AS VARCHAR)"


def _cell(column: str, kind: str, exact: bool = True) -> str:
    """SQL text for one column of the canonical export."""
    quoted = f'"{column}"'
    element = re.match(r"^(.*?)(\[\d*\])$", kind)
    if element:
        inner = _number("x", element.group(1), exact)
        elements = f"list_transform(CAST({quoted} AS {element.group(1)}[]), lambda x: {inner})"
        text = f"'[' || array_to_string({elements}, ',') || ']'"
    elif FLOATS.match(kind):
        text = _number(quoted, kind, exact)
    elif kind == "BOOLEAN":
        text = f"CASE WHEN {quoted} THEN 'true' ELSE 'false' END"
    elif kind == "VARCHAR":
        text = f"replace(replace(replace({quoted}, '\\', '\\\\'), chr(9), '\\t'), chr(10), '\\n')"
    else:
        text = f"CAST({quoted} AS VARCHAR)"
    return f"coalesce({text}, '\\N')"


# Key columns whose order in DuckDB (integers by value, text byte by byte) Arrow's comparisons share.
STORED_ORDER_KINDS = re.compile(r"^U?(TINYINT|SMALLINT|INTEGER|BIGINT)$|^VARCHAR$")


def table_digest(
    wh: Warehouse, table: str, grain: tuple[str, ...] = (), export: str = CANONICAL_EXPORT
) -> tuple[str, int]:
    """(SHA-256 of the table's canonical export, row count); `export` names the export's version."""
    if export not in (CANONICAL_EXPORT, CANONICAL_EXPORT_12G):
        raise RankhouseError(f"unknown canonical export {export!r}")
    described = wh.sql(f"DESCRIBE SELECT * FROM {table}")
    columns = [(name, kind) for name, kind, *_ in described]
    cells = ", chr(9), ".join(_cell(name, kind, export == CANONICAL_EXPORT) for name, kind in columns)
    line = f"concat({cells}, chr(10))"  # one concat, ended by a newline
    key = list(grain) or [name for name, _ in columns]
    kinds = dict(columns)
    if (
        all(STORED_ORDER_KINDS.match(kinds.get(k, "")) for k in key)
        and not wh.sql("SELECT current_setting('default_collation')")[0][0]
    ):
        # A table stored in its canonical order (its grain, or all its columns, strictly increasing row
        # after row: e.g. a generated plan, written in order) is hashed as it is stored, without a sort;
        # at the first row out of order, it is sorted after all.
        keys = ", ".join(f'"{k}"' for k in key)
        stored = wh.con.sql(f"SELECT {line}, {keys} FROM {table}")
        found = canonical_sha256(stored.to_arrow_reader(CHUNK), ordered=True)
        if found is not None:
            return found
    order = ", ".join([*(f'"{g}"' for g in grain), *(f'"{name}"' for name, _ in columns)])
    # DuckDB sorts the rows on their own values, then writes each line as the sorted rows stream out;
    # Python hashes the lines' bytes as Arrow holds them: a third of the memory of sorting the lines'
    # text and making each line a Python string (docs/performance.md).
    sorted_rows = f"SELECT * FROM {table} ORDER BY {order} NULLS LAST"
    lines = wh.con.sql(f"SELECT {line} FROM ({sorted_rows}) AS rh_sorted")
    return canonical_sha256(lines.to_arrow_reader(CHUNK))


def _text(column: pa.Array) -> pa.Array:
    """A text column as Arrow's string or large_string (DuckDB may hand a string view)."""
    import pyarrow as pa

    if pa.types.is_string_view(column.type):
        return column.cast(pa.large_string())
    return column


def _increasing(keys: list[pa.Array]) -> bool:
    """Whether the rows of `keys` (a list of equally long columns, none null) strictly increase, compared
    column after column as ORDER BY compares them.

    >>> _increasing([pa.array([1, 1, 2]), pa.array(["b", "c", "a"])]), _increasing([pa.array([1, 1])])
    (True, False)
    """
    import pyarrow.compute as pc

    if any(k.null_count for k in keys):
        return False
    n = len(keys[0])
    if n < 2:
        return True
    less = equal = None  # row i < row i + 1, row i = row i + 1, on the keys so far (pa.array imports pandas)
    for key in keys:
        before, after = key.slice(0, n - 1), key.slice(1)
        if less is None:
            less, equal = pc.less(before, after), pc.equal(before, after)
        else:
            less = pc.or_(less, pc.and_(equal, pc.less(before, after)))
            equal = pc.and_(equal, pc.equal(before, after))
    return bool(pc.all(less).as_py())


def canonical_sha256(batches: Iterable[pa.RecordBatch], ordered: bool = False) -> tuple[str, int] | None:
    """(the canonical digest, line count) of lines that arrive as the first, text column of `batches`,
    each line ended by a newline: the lines cut into chunks of CHUNK, each chunk's lines joined by
    newlines (the last one's newline left out) and hashed, then the SHA-256 of the chunks' hex digests
    joined by newlines. Hashed from Arrow's buffers, a run of lines at a time, with no Python string per
    line. An empty table is one empty chunk. With `ordered`, the batches' other columns are the lines'
    sort key, which must strictly increase from line to line: None (and no more batches read) when it
    does not.

    >>> canonical_sha256([pa.record_batch([pa.array(["a\\n", "b\\n"])], names=["line"])])[1]
    2
    """
    import numpy as np
    import pyarrow as pa

    chunks: list[str] = []
    chunk, in_chunk, newline_owed, rows, last = hashlib.sha256(), 0, False, 0, None
    for batch in batches:
        if ordered and batch.num_rows:
            keys = [_text(batch.column(i)) for i in range(1, batch.num_columns)]
            joined = keys if last is None else [pa.concat_arrays([p, k]) for p, k in zip(last, keys, strict=True)]
            if not _increasing(joined):
                return None
            last = [k.slice(len(k) - 1) for k in keys]
        column = _text(batch.column(0))
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            column = column.cast(pa.large_string())
        width = np.int64 if pa.types.is_large_string(column.type) else np.int32
        _, offsets, data = column.buffers()
        offsets = np.frombuffer(offsets, dtype=width)[column.offset : column.offset + len(column) + 1]
        data = memoryview(data if data is not None else b"")
        start = 0
        while start < len(column):
            take = min(len(column) - start, CHUNK - in_chunk)
            if newline_owed:  # the newline after the previous run's last line, which this chunk goes on from
                chunk.update(b"\n")
            chunk.update(data[int(offsets[start]) : int(offsets[start + take]) - 1])  # its last newline owed
            newline_owed, in_chunk, start = True, in_chunk + take, start + take
            if in_chunk == CHUNK:
                chunks.append(chunk.hexdigest())
                chunk, in_chunk, newline_owed = hashlib.sha256(), 0, False
        rows += len(column)
    if in_chunk or not chunks:  # the last, shorter chunk; an empty table's one empty chunk
        chunks.append(chunk.hexdigest())
    return hashlib.sha256("\n".join(chunks).encode()).hexdigest(), rows


def row_digest(wh: Warehouse, table: str) -> str:
    """The row digest of `table` (a table name or a parenthesised query): one scan, order-independent
    (digests.py row_digest_and_count).

    >>> row_digest(wh, "raw.resample_plans")  # doctest: +SKIP
    '3b0f...'
    """
    return row_digest_and_count(wh, table)[0]


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
    """Every freeze file of a study, oldest first, with the chain checked: numbers 1, 2, ... without a
    gap, and each freeze after the first naming its predecessor, a reason, and (freezes of this
    canonical export) the predecessor file's SHA-256."""
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
                if not isinstance(record, dict):
                    raise RankhouseError(f"freeze file {path} is not a freeze record (a JSON object)")
                n = int(match.group("n"))
                found.append(Freeze(f"{study}-{n}", study, n, path, hashlib.sha256(data).hexdigest(), record))
    found.sort(key=lambda f: f.n)
    for position, freeze in enumerate(found):
        _check_link(freeze, found[position - 1] if position else None, position + 1)
    return found


def _check_link(freeze: Freeze, previous: Freeze | None, expected_n: int) -> None:
    """One link of the chain: its number, and what a freeze after the first must name."""
    if freeze.n != expected_n:
        raise RankhouseError(
            f"freeze file {freeze.path} breaks the chain of study {freeze.study}: expected "
            f"{freeze.study}-{expected_n}.json next (freeze files are numbered 1, 2, ... and never removed)"
        )
    if previous is None:
        if freeze.supersedes is not None:
            raise RankhouseError(
                f"freeze file {freeze.path} is the first freeze but says it supersedes {freeze.supersedes}"
            )
        return
    if freeze.supersedes != previous.freeze_id or not str(freeze.reason or "").strip():
        raise RankhouseError(
            f"freeze file {freeze.path} does not name the freeze it supersedes ({previous.freeze_id}) with a reason; "
            "every freeze after the first does (rankhouse study freeze --supersedes ... --reason ...)"
        )
    chained = freeze.record.get("previous_sha256")
    if (
        chained is not None or freeze.record.get("canonical_export") == CANONICAL_EXPORT
    ) and chained != previous.file_sha256:
        raise RankhouseError(
            f"freeze file {freeze.path} records {previous.freeze_id}'s SHA-256 as {chained}, but "
            f"{previous.path} has {previous.file_sha256}: one of them was edited"
        )


def write_freeze(wh: Warehouse, directory: Path, study: str, n: int, record: dict) -> Freeze:
    """Create `<directory>/<study>-<n>.json` and its meta.freezes row in one step: the row is written
    in a transaction that commits only once the file is in place. An existing file is never
    overwritten (that is an error)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{study}-{n}.json"
    if path.exists() or wh.sql("SELECT 1 FROM meta.freezes WHERE freeze_id = ?", [f"{study}-{n}"]):
        raise RankhouseError(f"freeze file {path} already exists; freeze files are never overwritten")
    data = (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()
    freeze = Freeze(f"{study}-{n}", study, n, path, hashlib.sha256(data).hexdigest(), record)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{study}-{n}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        with wh.transaction():
            _record(wh, freeze)
            try:
                os.link(temporary, path)  # atomic, and fails if the file exists
            except FileExistsError:
                raise RankhouseError(f"freeze file {path} already exists; freeze files are never overwritten") from None
    finally:
        os.unlink(temporary)
    return freeze


def _record(wh: Warehouse, freeze: Freeze) -> None:
    wh.sql(
        "INSERT INTO meta.freezes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            freeze.freeze_id, freeze.study, freeze.n, str(freeze.path), freeze.file_sha256,
            freeze.record["protocol"]["sha256"], freeze.record["created_at"], freeze.supersedes, freeze.reason,
        ],
    )  # fmt: skip


def check_recorded(wh: Warehouse, study: str, freezes: list[Freeze], fix: str) -> None:
    """Every freeze file must be one this warehouse wrote (its meta.freezes row, same SHA-256), and
    every recorded freeze must still have its file. `fix` is the command that shows the study."""
    rows = {
        r[0]: r[1:] for r in wh.sql("SELECT freeze_id, file_sha256, path FROM meta.freezes WHERE study = ?", [study])
    }
    for freeze in freezes:
        if freeze.freeze_id not in rows:
            raise RankhouseError(
                f"freeze file {freeze.path} is not recorded in warehouse {wh.path} (meta.freezes): this warehouse "
                "did not write it, or its record was deleted, and it never adopts a freeze file. Use the warehouse "
                "that wrote it; if rankhouse was interrupted while freezing, move the file away and freeze again"
            )
        if rows[freeze.freeze_id][0] != freeze.file_sha256:
            raise RankhouseError(f"the freeze file {freeze.path} was edited after it was written")
    missing = sorted(set(rows) - {f.freeze_id for f in freezes})
    if missing:
        raise RankhouseError(
            f"freeze {', '.join(missing)} of study {study} is recorded in warehouse {wh.path} but its file "
            f"{rows[missing[0]][1]} is gone; freeze files are never removed ({fix})"
        )


def frozen_models(wh: Warehouse) -> dict[str, tuple[str, str]]:
    """Per model, the latest freeze of each study recorded in `wh` that covers it and the fingerprint it
    froze: {model: (freeze_id, fingerprint)}. A freeze file that is gone or unreadable covers nothing
    here (`rankhouse study status` reports it).

    Example: frozen_models(wh).get("measure_requests")  # ('trec_sample-1', '58aa73ab...')
    """
    latest = wh.sql(
        "SELECT freeze_id, path, file_sha256 FROM meta.freezes QUALIFY n = max(n) OVER (PARTITION BY study) "
        "ORDER BY freeze_id"
    )
    frozen: dict[str, tuple[str, str]] = {}
    for freeze_id, path, file_sha256 in latest:
        try:
            data = Path(path).read_bytes()
            models = json.loads(data)["models"] if hashlib.sha256(data).hexdigest() == file_sha256 else {}
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for model, fingerprint in models.items() if isinstance(models, dict) else ():
            frozen.setdefault(model, (freeze_id, fingerprint))
    return frozen


def frozen_otherwise(wh: Warehouse, names: list[str], fingerprint: Callable[[str], str],
                     besides: str | None = None) -> dict[str, str]:  # fmt: skip
    """The models of `names` that a study's latest freeze (not study `besides`'s) covers as built with
    another fingerprint than `fingerprint(name)` would build now: {model: freeze_id}, in `names`' order.

    Example: frozen_otherwise(wh, ["measure_requests"], Runner(wh, project).fingerprint)  # {...: 'trec_sample-1'}
    """
    frozen = {m: v for m, v in frozen_models(wh).items() if v[0].rsplit("-", 1)[0] != besides}
    return {n: frozen[n][0] for n in names if n in frozen and fingerprint(n) != frozen[n][1]}


class Freezing:
    """A study's freezes: its snapshot, `freeze` and `verify` (a part of Study: rankhouse/study/stages.py)."""

    protocol: Protocol
    wh: Warehouse
    project: Project
    prepare_models: list[str]
    evaluate_models: list[str]
    freezes_dir: Path

    def freezes(self) -> list[Freeze]:
        """This study's freeze files, oldest first: a checked chain, every file one this warehouse wrote."""
        found = read_freezes(self.freezes_dir, self.protocol.name)
        check_recorded(self.wh, self.protocol.name, found, f"rankhouse study status {self.protocol.path}")
        return found

    def snapshot(self, export: str = CANONICAL_EXPORT, known: Freeze | None = None, full: bool = False) -> dict:
        """What a freeze records and evaluate checks again: hashes of the protocol, inputs, models, tables
        (a table whose row digest is the one in `known`, the latest freeze, keeps that freeze's entry
        unless `full`: _table_digests), and the evaluate plan."""
        runner = self.runner()
        models = {}
        built = runner.last_builds(self.prepare_models)
        for name in self.prepare_models:
            fingerprint = runner.fingerprint(name)
            if built[name] != fingerprint:
                raise RankhouseError(
                    f"model {name} is missing or out of date: run `rankhouse study prepare {self.protocol.path}`"
                )
            models[name] = fingerprint
        return {
            "protocol": {"path": shown(self.protocol.path), "sha256": self.protocol.sha256},
            "inputs": self._input_record({**self.check_inputs(), **{i.key: i.sha256 for i in self.label_inputs}}),
            "parameters": self.protocol.parameters,
            "models": models,
            "objects": self._object_digests(),
            "tables": self._table_digests(export, known, full),
            "plan": self.plan(runner),
        }

    def plan(self, runner: Runner | None = None) -> dict:
        """The evaluate plan a freeze records: every evaluate model's plan fingerprint (its SQL, parameters
        and parents, not the labels: Runner.plan_fingerprint) and the measures the protocol asks for, as
        the registry reads them."""
        from rankhouse.measures import parse_measures

        runner = runner or self.runner()
        measures = self.protocol.parameters.get("measures")
        asked = [m.canonical for m in parse_measures(list(measures))] if measures else []
        return {"evaluate": {name: runner.plan_fingerprint(name) for name in self.evaluate_models}, "measures": asked}

    def _object_digests(self) -> dict[str, str | None]:
        """SHA-256 of every prepare model's view or table definition in the namespace's catalog."""
        objects = model_objects(self.wh)
        return {name: objects.get(name, {}).get(object_kind(self.project.models[name])) for name in self.prepare_models}

    def derived_tables(self) -> set[str]:
        """The frozen tables whose rows a recipe decides, which a freeze identifies by their row digest
        instead of a canonical export: those prepare models build (the recipe: the model's fingerprint,
        in the freeze's `models`) and raw tables of which the study's slice holds only generated rows
        (vectors, seeded plans: each one's recipe and digest in meta.sources, part of the fingerprint of
        every model that reads it)."""
        models = (self.project.models[name] for name in self.prepare_models)
        derived = {model.table for model in models if model.materialized == "table"}
        origins = self.wh.sql("SELECT table_name, list(DISTINCT origin) FROM meta.loads GROUP BY 1")
        return derived | {table for table, kinds in origins if all(o.startswith("generate.") for o in kinds)}

    def frozen_tables(self) -> dict[str, tuple[str, ...]]:
        """The tables a freeze hashes, with their grain: every prepare model built as a table, and
        every raw table that a model of either stage reads (all label-free: labels never enter raw.*).
        A view is frozen by its fingerprint alone: its content is a function of those tables and its SQL."""
        frozen = {}
        for name in self.prepare_models + self.evaluate_models:
            model = self.project.models[name]
            if model.stage == "prepare" and model.materialized == "table":
                frozen[model.table] = model.grain
            for ref in self.project.references[name]:
                if ref.startswith("raw."):
                    frozen[ref] = ()
        return dict(sorted(frozen.items()))

    def _table_digests(
        self, export: str = CANONICAL_EXPORT, known: Freeze | None = None, full: bool = False
    ) -> dict[str, dict | None]:
        """The digests of every frozen table (None if missing): its row digest and row count, and the
        SHA-256 of its canonical export, except for a table a recipe decides (derived_tables), which its
        row digest identifies (as `known`, the freeze compared with, recorded it, or `known` is None).
        A table whose row digest is the one `known` recorded, taken by this DuckDB version, keeps
        `known`'s entry without a canonical export unless `full` (this module: row digest). A row digest
        taken before, of the very file that holds the table now, is not taken again unless `full`
        (digests.py)."""
        recorded = known.record["tables"] if known is not None else {}
        same_engine = known is not None and known.record.get("duckdb_version") == duckdb.__version__
        derived = self.derived_tables()
        taken = RowDigests(self.wh)
        digests = {}
        for table, grain in self.frozen_tables().items():
            resolved = self.wh.resolve(table)
            if resolved is None:
                digests[table] = None
                continue
            quick, count = row_digest_and_count(self.wh, table) if full else taken.take(table, resolved)
            before = recorded.get(table) or {}
            if same_engine and not full and before.get("quick") == quick:
                digests[table] = before
            elif table in derived and "sha256" not in before:
                digests[table] = {"rows": count, "quick": quick}
            else:
                digest, rows = table_digest(self.wh, table, grain, export)
                digests[table] = {"sha256": digest, "rows": rows, "quick": quick}
        taken.save()
        return digests

    def freeze(
        self, supersedes: str | None = None, reason: str | None = None, full: bool = False
    ) -> tuple[Freeze, bool]:
        """Freeze the prepared study; returns (the freeze, whether it is new).

        An identical latest freeze is reused (a table whose row digest is the latest freeze's is not
        exported again unless `full`). A study that changed since its latest freeze needs
        `supersedes` naming that freeze and a `reason`; the correction is a new freeze file.
        """
        problems = self.content_problems()
        if problems:
            raise RankhouseError(f"study {self.protocol.name} cannot be frozen:\n  " + "\n  ".join(problems))
        self._register()
        existing = self.freezes()
        latest = existing[-1] if existing else None
        # compared with the latest freeze as it was made (an older freeze: 12-digit floats, no objects)
        export = latest.record.get("canonical_export", CANONICAL_EXPORT) if latest else CANONICAL_EXPORT
        snapshot = self.snapshot(export, latest, full)
        snapshot_content = _content(snapshot)
        if latest and "objects" not in latest.record:
            snapshot_content["objects"] = None
        if latest and _content(latest.record) == snapshot_content and supersedes is None:
            self.say(f"unchanged since freeze {latest.freeze_id}; nothing to freeze")
            return latest, False
        if latest is None and supersedes is not None:
            raise FreezeError(f"study {self.protocol.name} has no freeze to supersede")
        if latest is not None:
            if supersedes is None:
                unplanned = [] if latest.record.get("plan") else [f"{latest.freeze_id} records no evaluate plan"]
                changes = "; ".join(describe_changes(latest.record, snapshot) + unplanned)
                raise FreezeError(
                    f"study {self.protocol.name} is frozen as {latest.freeze_id} and has changed since ({changes}). "
                    f"A correction is a new freeze: rankhouse study freeze {self.protocol.path} "
                    f"--supersedes {latest.freeze_id} --reason '...'"
                )
            if supersedes != latest.freeze_id:
                raise FreezeError(f"--supersedes must name the latest freeze, {latest.freeze_id}, not {supersedes}")
            if not (reason or "").strip():
                raise FreezeError("a superseding freeze needs --reason saying what was corrected and why")
            if _content(latest.record) == snapshot_content:
                raise FreezeError(f"nothing changed since {latest.freeze_id}: there is nothing to correct")
        if export != CANONICAL_EXPORT:
            snapshot["tables"] = self._table_digests()  # a new freeze is written with the current export
        n = latest.n + 1 if latest else 1
        record = {
            "freeze_id": f"{self.protocol.name}-{n}",
            "study": self.protocol.name,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "rankhouse_version": rankhouse.__version__,
            "duckdb_version": duckdb.__version__,
            "canonical_export": CANONICAL_EXPORT,
            "layout": LAYOUT_VERSION,
            "supersedes": supersedes,
            "reason": reason,
            "previous_sha256": latest.file_sha256 if latest else None,
            **snapshot,
        }
        frozen = write_freeze(self.wh, self.freezes_dir, self.protocol.name, n, record)
        self.wh.publish()
        self.say(f"froze {frozen.freeze_id} in {frozen.path}")
        return frozen, True

    def _input_record(self, digests: dict[str, str]) -> dict:
        return {
            i.key: {"path": shown(i.path), "sha256": digests[i.key], "loader": i.loader}
            for i in self.protocol.inputs
            if i.key in digests
        }

    def verify(self, freeze: Freeze, full: bool = False) -> list[str]:
        """Everything that changed since `freeze`; empty if the freeze is intact.

        Recomputed from scratch: the freeze file's own hash, the protocol's, every input file's, every
        prepare model's fingerprint (its SQL, parameters, parents and loaded data as they are now), every
        frozen table's row digest, its canonical export where that digest is not the frozen one (or for
        every table if `full`, or if the freeze has no row digests or is another DuckDB's), and the
        evaluate plan; and nothing in the warehouse's files that rankhouse does not make.
        """
        problems = []
        recorded = self.wh.sql("SELECT file_sha256 FROM meta.freezes WHERE freeze_id = ?", [freeze.freeze_id])
        if not recorded or recorded[0][0] != freeze.file_sha256:
            problems.append(f"the freeze file {freeze.path} was edited after it was written")
        problems += [f"the warehouse defines {kind} {name}, which may shadow a built-in function that models call: "
                     f"DROP {'TYPE' if kind == 'type' else 'MACRO'} {name}"
                     for kind, name in user_functions(self.wh)]  # fmt: skip
        problems += self.wh.foreign_objects()
        problems += self.content_problems(full=full)
        digests = {}
        hashed = self._hash_inputs(self.protocol.inputs)
        for item in self.protocol.inputs:
            if isinstance(hashed[item.key], OSError):
                problems.append(f"input {item.key}: {item.path} cannot be read")
            else:
                digests[item.key] = hashed[item.key]
        runner = self.runner()
        now = {
            "protocol": {"path": shown(self.protocol.path), "sha256": self.protocol.sha256},
            "inputs": self._input_record(digests),
            "parameters": self.protocol.parameters,
            "models": {name: runner.fingerprint(name) for name in self.prepare_models},
            "objects": self._object_digests(),
            "tables": self._table_digests(freeze.record.get("canonical_export", CANONICAL_EXPORT), freeze, full),
            "plan": self.plan(runner),
        }
        built = runner.last_builds(self.prepare_models)
        for name in self.prepare_models:
            if built[name] != runner.fingerprint(name):
                model = self.project.models[name]
                if built[name] is not None and built[name] == freeze.record["models"].get(name):
                    problems.append(  # the frozen build, and the model's code changed since (a new release)
                        f"{model.materialized} {model.table} was built by the frozen definition of its model, "
                        f"which changed since: rebuild it with rankhouse study prepare {self.protocol.path}"
                    )
                    continue
                problems.append(
                    f"{model.materialized} {model.table} is not the one its model built (replaced, redefined or "
                    f"dropped in the warehouse): rebuild it with rankhouse study prepare {self.protocol.path}"
                )
        return problems + describe_changes(freeze.record, now)


def _content(record: dict) -> dict:
    """The part of a freeze record that a later snapshot must reproduce (hashes, not paths)."""
    return {
        "protocol": record["protocol"]["sha256"],
        "inputs": {key: entry["sha256"] for key, entry in record["inputs"].items()},
        "parameters": record.get("parameters"),
        "models": record["models"],
        "objects": record.get("objects"),
        "tables": {t: e and _table_identity(e) for t, e in record["tables"].items()},
        "plan": record.get("plan"),
    }


def _table_identity(entry: dict) -> dict:
    """What identifies a frozen table's rows: its canonical export's SHA-256 and row count, or, for a
    table a recipe decides (Study.derived_tables), its row digest and row count."""
    if "sha256" in entry:
        return {"sha256": entry["sha256"], "rows": entry["rows"]}
    return {"quick": entry["quick"], "rows": entry["rows"]}


def describe_changes(recorded: dict, now: dict) -> list[str]:
    """Human-readable differences between a freeze record and a fresh snapshot."""
    changes = []
    if recorded["protocol"]["sha256"] != now["protocol"]["sha256"]:
        changes.append(f"the protocol file {now['protocol']['path']} changed")
    for key in sorted(set(recorded["inputs"]) | set(now["inputs"])):
        before, after = recorded["inputs"].get(key), now["inputs"].get(key)
        if before is None or after is None:
            changes.append(f"input {key} was {'added' if before is None else 'removed'}")
        elif before["sha256"] != after["sha256"]:
            changes.append(
                f"input {key} ({after['path']}) changed: SHA-256 {after['sha256'][:16]}..., "
                f"frozen {before['sha256'][:16]}..."
            )
    for key in sorted(set(recorded.get("parameters", {})) | set(now["parameters"])):
        if recorded.get("parameters", {}).get(key) != now["parameters"].get(key):
            changes.append(
                f"parameter {key} is {now['parameters'].get(key)!r}, frozen {recorded.get('parameters', {}).get(key)!r}"
            )
    for name in sorted(set(recorded["models"]) | set(now["models"])):
        if recorded["models"].get(name) != now["models"].get(name):
            changes.append(f"model {name} changed (its SQL, parameters, parents or data)")
    # absent in freezes from before object digests; of another layout's objects in freezes carried over by
    # `rankhouse migrate` (the objects are checked against their recorded builds all the same: Runner.last_builds)
    frozen_objects = (recorded.get("objects") or {}) if recorded.get("layout") == LAYOUT_VERSION else {}
    for name in sorted(set(frozen_objects) & set(now.get("objects", {}))):
        if frozen_objects[name] != now["objects"][name]:
            changes.append(f"the definition of models.{name} in the warehouse differs from the frozen one")
    frozen_plan, now_plan = recorded.get("plan"), now.get("plan")  # None: a freeze made before plans were recorded
    if frozen_plan is not None and now_plan is not None:
        before, after = frozen_plan.get("evaluate", {}), now_plan.get("evaluate", {})
        for name in sorted(set(before) | set(after)):
            if name not in after:
                changes.append(f"evaluate model {name} is no longer in the evaluate stage")
            elif name not in before:
                changes.append(f"evaluate model {name} was added to the evaluate stage")
            elif before[name] != after[name]:
                changes.append(f"evaluate model {name} changed (its SQL, parameters or parents)")
        if frozen_plan.get("measures") != now_plan.get("measures"):
            changes.append(
                f"the measures asked for are {now_plan.get('measures')}, frozen {frozen_plan.get('measures')}"
            )
    frozen_tables, now_tables = _content(recorded)["tables"], _content(now)["tables"]  # row digests aside
    for table in sorted(set(frozen_tables) | set(now_tables)):
        if now_tables.get(table) is None:
            changes.append(f"table {table} is missing")
        elif frozen_tables.get(table) != now_tables.get(table):
            changes.append(f"table {table} differs from its frozen rows (edited after the freeze?)")
    return changes
