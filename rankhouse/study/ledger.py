"""The input ledger of a study: its input files hashed and loaded (each read once, its bytes the
protocol's), the study's slice of the shared inputs (meta.loads, and the namespace's raw.* views over
it), and the content digests of what each load wrote, so that rows edited after loading are found."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from rankhouse.errors import RankhouseError
from rankhouse.loaders import LOADERS, LoadResult
from rankhouse.loaders.sources import expecting, sha256_bytes, sha256_file
from rankhouse.progress import Progress
from rankhouse.study.freeze import row_digest, table_digest
from rankhouse.study.protocol import Input, Protocol, check_regular, shown
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.literals import literal


class InputLedger:
    """A study's inputs and what their loads wrote (a part of Study: rankhouse/study/stages.py)."""

    protocol: Protocol
    wh: Warehouse
    progress: Progress

    def _register(self) -> None:
        """Record the protocol in the study's namespace (it names the study's labels file too)."""
        if self.wh.sql("SELECT protocol_path FROM meta.studies WHERE study = ?", [self.protocol.name]) == [
            (str(self.protocol.path),)
        ]:
            return
        with self.wh.transaction():
            self.wh.sql("DELETE FROM meta.studies WHERE study = ?", [self.protocol.name])
            self.wh.sql(
                "INSERT INTO meta.studies VALUES (?, ?, current_localtimestamp())",
                [self.protocol.name, str(self.protocol.path)],
            )

    @property
    def label_inputs(self) -> tuple[Input, ...]:
        return tuple(i for i in self.protocol.inputs if i.is_label)

    @property
    def data_inputs(self) -> tuple[Input, ...]:
        """The inputs that are not labels: read, hashed and loaded from the prepare stage on."""
        return tuple(i for i in self.protocol.inputs if not i.is_label)

    def check_inputs(self, inputs: tuple[Input, ...] | None = None) -> dict[str, str]:
        """SHA-256 of the input files (by default the label-free ones: a label file is read only once the
        freeze verifies), which must match the protocol; an error names each that does not."""
        found, problems = {}, []
        inputs = self.data_inputs if inputs is None else inputs
        hashed = self._hash_inputs(inputs)
        for item in inputs:
            digest = hashed[item.key]
            if isinstance(digest, OSError):
                problems.append(f"input {item.key}: cannot read {item.path} ({digest.strerror})")
                continue
            if digest != item.sha256:
                problems.append(
                    f"input {item.key}: {item.path} has SHA-256 {digest}, the protocol expects {item.sha256}"
                )
            found[item.key] = digest
        if problems:
            raise RankhouseError("the inputs do not match the protocol:\n  " + "\n  ".join(problems))
        return found

    def _load(self, inputs: tuple[Input, ...]) -> list[tuple[Input, LoadResult]]:
        """Load each input (a no-op for bytes already loaded), each file read once: the loader hashes the
        bytes it parses and the load is refused, before it writes, unless they are the protocol's
        (loaders.sources.expecting); a file that is not a regular file (a pipe, a device) is refused.
        Bytes loaded before without a recorded content digest (outside a study, or by an older
        rankhouse) are loaded again from the file, so that every digest this study records is of the
        rows its file produces."""
        loaded = []
        for item in inputs:
            check_regular(item)
            result = self._load_one(item)
            if result.status == "unchanged" and self._recorded(item, result.table, result.name)[0] is None:
                self._forget_load(item, result)
                result = self._load_one(item)
                self.say(f"{item.path}: loaded again, to record the content of its rows")
            if result.sha256 != item.sha256:
                raise RankhouseError(
                    f"input {item.key}: {item.path} was loaded with SHA-256 {result.sha256}, the protocol expects "
                    f"{item.sha256}"
                )
            self.progress.loaded(result)
            loaded.append((item, result))
        return loaded

    def _hash_inputs(self, inputs: tuple[Input, ...]) -> dict[str, str | OSError]:
        """Per input key, the SHA-256 of its file (or why it cannot be read), with one bar over their bytes."""
        sizes = {item.key: item.path.stat().st_size if item.path.is_file() else 0 for item in inputs}
        total, before = sum(sizes.values()), 0
        bar = self.progress.bar(f"hashing {len(inputs)} input{'s' if len(inputs) != 1 else ''}")
        digests: dict[str, str | OSError] = {}
        for item in inputs:
            try:
                digests[item.key] = sha256_file(item.path, lambda done, at=before: bar(at + done, total))
            except OSError as exc:
                digests[item.key] = exc
            before += sizes[item.key]
        bar(total, total)
        return digests

    def _load_one(self, item: Input) -> LoadResult:
        loader = LOADERS[item.loader]
        with self.progress.loading(shown(item.path)), expecting(item.sha256, shown(item.path)):
            return loader.load(self.wh, item.path, item.name) if item.name else loader.load(self.wh, item.path)

    def _forget_load(self, item: Input, result: LoadResult) -> None:
        """Drop the record of a load, so that the loader reads the file again."""
        if item.is_label:
            with self.wh.labels():
                self.wh.sql(
                    "DELETE FROM labels.meta.sources WHERE table_name = ? AND name = ?", [result.table, result.name]
                )
        else:
            self.wh.sql("DELETE FROM meta.sources WHERE table_name = ? AND name = ?", [result.table, result.name])

    # -- the study's slice of the inputs ----------------------------------------------------------
    def _record_slice(self, rows: list[tuple[str, dict, str | None, str]], origin: str) -> None:
        """Replace the ledger rows of `origin` (`inputs.`: every input; `generate.<key>`: one generator) of
        the study's slice (meta.loads: table, key, source name, origin) by `rows`, and make the
        namespace's raw.* views show the slice's rows and no others."""
        with self.wh.transaction():
            if origin.endswith("."):
                self.wh.sql("DELETE FROM meta.loads WHERE starts_with(origin, ?)", [origin])
            else:
                self.wh.sql("DELETE FROM meta.loads WHERE origin = ?", [origin])
            for table, key, source, where in sorted({(t, json.dumps(k, sort_keys=True), s, o) for t, k, s, o in rows}):
                self.wh.sql("INSERT INTO meta.loads VALUES (?, ?, ?, ?)", [table, key, source, where])
            self._slice_views()

    def record_generated(self, key: str, rows: list[tuple[str, dict, str | None]]) -> None:
        """Record what generator `key` made (outside prepare: `rankhouse features extract`) in the study's
        slice of the inputs."""
        self._record_slice([(table, k, source, f"generate.{key}") for table, k, source in rows], f"generate.{key}")

    def _slice_views(self) -> None:
        """raw.<table> of the namespace: the inputs' rows of the study's slice (every raw table; no row of a
        table the study writes nothing into)."""
        ns = self.wh.catalog
        keys: dict[str, set[str]] = {}
        for table, key in self.wh.sql("SELECT table_name, key FROM meta.loads"):
            condition = " AND ".join(f'"{c}" = {literal(str(v))}' for c, v in sorted(json.loads(key).items()))
            keys.setdefault(table, set()).add(f"({condition})")
        self.wh.sql(f"CREATE SCHEMA IF NOT EXISTS {ns}.raw")
        tables = self.wh.sql(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'inputs' AND schema_name = 'raw'"
        )
        for (name,) in sorted(tables):
            where = " OR ".join(sorted(keys.get(f"raw.{name}", ()))) or "false"
            self.wh.sql(f'CREATE OR REPLACE VIEW {ns}.raw."{name}" AS SELECT * FROM inputs.raw."{name}" WHERE {where}')

    def _slice_of(self, loaded: list[tuple[Input, LoadResult]]) -> list[tuple[str, dict, str | None, str]]:
        """The ledger rows of loads: every table the loader writes, keyed by the name it loaded under."""
        return [
            (table, {column: result.name}, result.name, f"inputs.{item.key}")
            for item, result in loaded
            for table, column in LOADERS[item.loader].writes
            if column is not None and table.startswith("raw.")
        ]

    # -- loaded rows, by content ------------------------------------------------------------------
    def _loaded_rows(self, item: Input, name: str) -> list[str]:
        """A query per table of the rows a load of `item` under `name` wrote (labels through the gate,
        which must be open)."""
        loader = LOADERS[item.loader]
        schema = "gate." if loader.labels else ""
        return [
            f"(SELECT * FROM {schema}{table}{f' WHERE {column} = {literal(name)}' if column else ''})"
            for table, column in loader.writes
        ]

    def _content_sha256(self, item: Input, name: str) -> str:
        """SHA-256 over the canonical exports of the rows a load of `item` under `name` wrote."""
        parts = [table_digest(self.wh, rows)[0] for rows in self._loaded_rows(item, name)]
        return sha256_bytes("\n".join(parts).encode())

    def _row_digest(self, item: Input, name: str) -> str:
        """SHA-256 over the row digests (one scan each, rankhouse/study/freeze.py) of the same rows."""
        parts = [row_digest(self.wh, rows) for rows in self._loaded_rows(item, name)]
        return sha256_bytes(f"duckdb {duckdb.__version__}\n{chr(10).join(parts)}".encode())

    def _content_key(self, item: Input, table: str) -> str:
        return f"labels.{table}" if item.is_label else table

    def _recorded(self, item: Input, table: str, name: str) -> tuple[str | None, str | None]:
        """The (content SHA-256, row digest) recorded for a load; (None, None) if none is."""
        rows = self.wh.sql(
            "SELECT content_sha256, row_digest FROM meta.source_contents "
            "WHERE table_name = ? AND name = ? AND sha256 = ?",
            [self._content_key(item, table), name, item.sha256],
        )
        return rows[0] if rows else (None, None)

    def _record_contents(self, loaded: list[tuple[Input, LoadResult]]) -> None:
        """Record the content digest of every load that has none yet."""
        for item, result in loaded:
            if self._recorded(item, result.table, result.name)[0] is None:
                self.wh.sql(
                    "INSERT INTO meta.source_contents (table_name, name, sha256, content_sha256, recorded_at, "
                    "row_digest) VALUES (?, ?, ?, ?, current_localtimestamp(), ?)",
                    [self._content_key(item, result.table), result.name, item.sha256,
                     self._content_sha256(item, result.name), self._row_digest(item, result.name)],
                )  # fmt: skip

    def content_problems(self, labels: bool = False, full: bool = False) -> list[str]:
        """Loads of the study's inputs whose rows are no longer what the file produced (edited in the
        warehouse or the labels file after loading); labels need the gate open. Rows whose row digest
        is the recorded one are not exported again (unless `full`), as a freeze's tables are not."""
        problems = []
        meta = "gate.meta.sources" if labels else "meta.sources"
        for item in (i for i in self.protocol.inputs if i.is_label == labels):
            loads = self.wh.sql(
                f"SELECT table_name, name FROM {meta} WHERE sha256 = ? AND loader = ? ORDER BY ALL",
                [item.sha256, item.loader],
            )
            for table, name in loads:
                recorded, quick = self._recorded(item, table, name)
                if recorded is None:
                    continue
                now = self._row_digest(item, name)
                if quick == now and not full:
                    continue
                if recorded == self._content_sha256(item, name):
                    if quick != now and self.wh.writable:  # recorded before row digests, or by another DuckDB
                        self.wh.sql(
                            "UPDATE meta.source_contents SET row_digest = ? WHERE table_name = ? AND name = ? "
                            "AND sha256 = ?",
                            [now, self._content_key(item, table), name, item.sha256],
                        )
                else:
                    where = f"the labels file {self.wh.labels_path}" if labels else "the warehouse"
                    stage = "evaluate" if labels else "prepare"
                    problems.append(
                        f"input {item.key}: the rows it loaded into {self._content_key(item, table)} as {name!r} were "
                        f"changed in {where} after loading (they are not what {shown(item.path)} gives); "
                        f"load them again from the file: rankhouse study {stage} {self.protocol.path} --reload"
                    )
        return problems

    def reload(self, labels: bool = False) -> None:
        """Forget the loads of the study's inputs (raw ones, or labels), so that the next load reads
        every file again: the fix for rows edited after loading."""
        for item in (i for i in self.protocol.inputs if i.is_label == labels):
            if labels:
                if Path(self.wh.labels_path).exists():
                    with self.wh.labels():
                        self.wh.sql("DELETE FROM labels.meta.sources WHERE sha256 = ? AND loader = ?",
                                    [item.sha256, item.loader])  # fmt: skip
            else:
                with self.wh.writing_inputs():
                    self.wh.sql("DELETE FROM meta.sources WHERE sha256 = ? AND loader = ?", [item.sha256, item.loader])
            self.wh.sql("DELETE FROM meta.source_contents WHERE sha256 = ?", [item.sha256])

    def load_inputs(self, reload: bool = False) -> list[tuple[Input, LoadResult]]:
        """Load the label-free inputs (the first step of prepare, and of `rankhouse features extract`): rows
        edited since they were loaded are refused (before anything is written), `reload` loads every input
        again from its file instead. No label input is read, hashed or measured here."""
        for item in self.data_inputs:  # refused before anything is written
            check_regular(item)
        if reload:
            self.reload()
        problems = self.content_problems()
        if problems:
            raise RankhouseError(f"study {self.protocol.name} cannot be prepared:\n  " + "\n  ".join(problems))
        self.wh.close_gate()
        with self.wh.writing_inputs():
            loaded = self._load(self.data_inputs)
        self._register()
        self._record_slice(self._slice_of(loaded), "inputs.")
        self._record_contents(loaded)
        return loaded
