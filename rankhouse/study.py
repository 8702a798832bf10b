"""Studies: a protocol file, and the prepare -> freeze -> evaluate stages with the label gate.

A protocol (`studies/<name>.toml`) names its inputs with their SHA-256, its parameters and the
models of each stage:

    [study]
    name = "trec_sample"
    description = "..."

    [inputs.results]                      # paths are relative to the protocol file
    path = "../tests/fixtures/trec_eval/results.test"
    sha256 = "69019319..."
    loader = "trec.run"                   # trec.qrels and other label loaders write the labels file

    [parameters]                          # model parameters (jinja2), part of every fingerprint
    measures = ["AP", "nDCG@10"]

    [stages]
    prepare = "+run_ranking"              # dbt-style selections
    evaluate = "+run_measures"

prepare  loads the non-label inputs and builds the prepare models in the study's namespace; no label
         input is read, hashed or measured (layout: rankhouse/warehouse/layout.py).
freeze   writes `<freezes>/<study>-<n>.json`: the protocol's, inputs' and prepare models' hashes, the
         digests of every frozen table, and the evaluate plan (every evaluate model's plan fingerprint
         and the measures asked for); never overwritten. A changed study, its evaluate plan included,
         needs `--supersedes <previous> --reason TEXT`.
evaluate checks all of it again; only if nothing changed are the labels loaded (into the study's own
         labels file) and opened as `gate`, the evaluate models built there, and the results (the
         evaluate tables that hold no label rows) copied to `results.*` under the freeze id, beside
         the results of earlier freezes.

A study lives in its own namespace of the warehouse: its models, its slice of the shared inputs (the
rows its inputs and generators wrote: namespace.sql's meta.loads), its results and freezes, and its
labels; running another study in the same warehouse changes nothing of it.

A study's stages run on an engine (`--engine spark`: rankhouse/warehouse/spark.py), which is no part of a
fingerprint or a freeze: a study prepared on one engine verifies and evaluates on the other.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

import rankhouse
from rankhouse.errors import RankhouseError
from rankhouse.generators import GENERATORS, Context
from rankhouse.loaders import LOADERS, LoadResult
from rankhouse.loaders.sources import expecting, sha256_bytes, sha256_file
from rankhouse.progress import SILENT, Progress
from rankhouse.project import check_protocol_project, model_roots
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.catalog import load_models
from rankhouse.warehouse.dag import Project, selection_closure
from rankhouse.warehouse.freeze import (
    CANONICAL_EXPORT,
    Freeze,
    check_recorded,
    read_freezes,
    row_digest,
    table_digest,
    write_freeze,
)
from rankhouse.warehouse.layout import LAYOUT_VERSION, check_namespace
from rankhouse.warehouse.render import literal
from rankhouse.warehouse.runner import DuckDBEngine, ModelRun, Runner, model_objects, object_kind, user_functions


@dataclass(frozen=True)
class Input:
    """A protocol input: a file with its expected SHA-256 and the loader that reads it."""

    key: str
    path: Path
    sha256: str
    loader: str
    name: str | None = None

    @property
    def is_label(self) -> bool:
        return LOADERS[self.loader].labels


@dataclass(frozen=True)
class Generated:
    """A label-free table the prepare stage makes itself (a kind of rankhouse/generators.py: `vectors` of a
    corpus's texts, a seeded `resample_plan` over a corpus's queries, ...)."""

    key: str
    kind: str
    options: dict


@dataclass(frozen=True)
class Protocol:
    """A study's protocol file, parsed and checked."""

    name: str
    description: str
    path: Path
    sha256: str
    inputs: tuple[Input, ...]
    parameters: dict
    prepare: str
    evaluate: str
    outputs: dict = field(default_factory=dict)
    generated: tuple[Generated, ...] = ()

    @classmethod
    def load(cls, path: str | Path) -> Protocol:
        path = Path(path)
        check_protocol_project(path)  # a project's study runs with its project's models
        try:
            data = path.read_bytes()
            spec = tomllib.loads(data.decode("utf-8"))
        except OSError as exc:
            raise RankhouseError(f"cannot read protocol {path}: {exc.strerror}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RankhouseError(f"protocol {path} is not valid TOML: {exc}") from None

        def need(table: dict, key: str, where: str) -> object:
            if key not in table:
                raise RankhouseError(f"protocol {path}: [{where}] lacks {key}")
            return table[key]

        study = need(spec, "study", "study")
        stages = need(spec, "stages", "stages")
        inputs = []
        for key, entry in spec.get("inputs", {}).items():
            loader = need(entry, "loader", f"inputs.{key}")
            if loader not in LOADERS:
                raise RankhouseError(
                    f"protocol {path}: [inputs.{key}] unknown loader {loader!r}; known: {', '.join(LOADERS)}"
                )
            inputs.append(
                Input(
                    key=key,
                    path=(path.parent / str(need(entry, "path", f"inputs.{key}"))).resolve(),
                    sha256=str(need(entry, "sha256", f"inputs.{key}")),
                    loader=loader,
                    name=entry.get("name"),
                )
            )
        generated = []
        for key, entry in spec.get("generate", {}).items():
            kind = need(entry, "kind", f"generate.{key}")
            if kind not in GENERATORS:
                raise RankhouseError(
                    f"protocol {path}: [generate.{key}] unknown kind {kind!r}; known: {', '.join(GENERATORS)}"
                )
            for option in GENERATORS[kind].options:
                need(entry, option, f"generate.{key}")
            generated.append(Generated(key, kind, {k: v for k, v in entry.items() if k != "kind"}))
        name = str(need(study, "name", "study"))
        if name == "default":
            raise RankhouseError(
                f"protocol {path}: study name 'default' is the namespace of commands run outside a study"
            )
        try:
            check_namespace(name)
        except RankhouseError as exc:
            raise RankhouseError(f"protocol {path}: {exc}") from None
        return cls(
            name=name,
            description=str(study.get("description", "")),
            path=path.resolve(),
            sha256=sha256_bytes(data),
            inputs=tuple(inputs),
            parameters=dict(spec.get("parameters", {})),
            prepare=str(need(stages, "prepare", "stages")),
            evaluate=str(need(stages, "evaluate", "stages")),
            outputs=dict(spec.get("outputs", {})),
            generated=tuple(generated),
        )


def outputs_dir_for(db: str, study: str) -> Path:
    """Default place for a study's outputs: `<warehouse>.d/out/<study>/` (layout.py; the current directory's
    `out/<study>/` for a `:memory:` warehouse): they belong to the warehouse, as its freezes do, and one
    folder holds one study's outputs.

    >>> outputs_dir_for("/data/rankhouse.duckdb", "trec_sample")
    PosixPath('/data/rankhouse.d/out/trec_sample')
    """
    from rankhouse.warehouse.layout import MEMORY, Layout

    if db == MEMORY:
        return Path.cwd() / "out" / study
    return Layout.of(db).out / study


@dataclass
class Evaluation:
    """What an evaluation did: the freeze it ran under, and whether its results were new."""

    freeze: Freeze
    runs: list[ModelRun]
    new_results: bool


def study_models(protocol: Protocol) -> list[str] | None:
    """The models a study's project must hold: those its stages name and every companion view (header
    `companion: true`), with what they read (Project.load's closure), so that a study command renders and
    parses only those; None (the whole project) where a stage selects by descendants, stage or group.

    >>> study_models(Protocol.load(Path("studies/banking77.toml")))[:2]  # doctest: +SKIP
    ['retrieval_runs', 'query_duplicate_counts']
    """
    prepare, evaluate = selection_closure(protocol.prepare), selection_closure(protocol.evaluate)
    if prepare is None or evaluate is None:
        return None
    companions = [name for name, model in load_models(model_roots()).items() if model.companion]
    return list(dict.fromkeys(prepare + evaluate + companions))


class Study:
    """One protocol on one warehouse: its stages, its freezes and its gate."""

    def __init__(
        self,
        protocol: Protocol,
        wh: Warehouse,
        freezes: Path | None = None,
        project: Project | None = None,
        progress: Progress | None = None,
        engine: DuckDBEngine | None = None,
    ) -> None:
        self.protocol = protocol
        self.wh = wh
        wh.use(protocol.name)  # the study's namespace: its models, slice of the inputs, results and labels
        # Where the models are computed (DuckDB, or SparkEngine for --engine spark; the caller closes it).
        # No stage depends on it: fingerprints, freezes and the gate are the warehouse's on either engine.
        self.engine = engine or DuckDBEngine()
        self.freezes_dir = freezes or wh.layout.freezes
        # Models are rendered with the protocol's parameters and `study`, its name (the study column of
        # the shared rankings, judgments and measures), where a model declares it.
        self.parameters = {"study": protocol.name, **protocol.parameters}
        if project is None:
            project = Project.load(params=self.parameters, closure=study_models(protocol))
        elif project.params != self.parameters:  # its graph read with other parameters (a model's source may
            project = Project.load(project.roots, params=self.parameters)  # switch on one): read it again
        self.project = project
        if not any("study" in m.parameters for m in self.project.models.values()):
            self.parameters.pop("study")
        self.progress = progress or SILENT  # notes, model lines, loads and bars (rankhouse/progress.py)
        self.say = self.progress.say
        selected = self.project.select(protocol.prepare)
        wrong = [m for m in selected if self.project.models[m].stage != "prepare"]
        if wrong:
            raise RankhouseError(
                f"protocol {protocol.path}: the prepare stage selects evaluate models {', '.join(wrong)}"
            )
        self.evaluate_models = [
            m for m in self.project.select(protocol.evaluate) if self.project.models[m].stage == "evaluate"
        ]
        # The prepare stage also builds every prepare model the evaluate stage reads (the staged inputs,
        # the measure requests, ...), so that all of them are frozen.
        needed = {a for m in self.evaluate_models for a in self.project.ancestors(m)} | set(selected)
        self.prepare_models = [
            m for m in self.project.order if m in needed and self.project.models[m].stage == "prepare"
        ]
        # Views for analysts over the prepare models (header `companion: true`, e.g. rankings keyed by qid
        # and docno): built after them, never frozen (no model reads them).
        prepared = set(self.prepare_models)
        self.companions = [
            m for m in self.project.order
            if self.project.models[m].companion and m not in prepared and set(self.project.parents[m]) <= prepared
        ]  # fmt: skip

    # -- bookkeeping ------------------------------------------------------------------------------
    def runner(self) -> Runner:
        """A runner of the study's models with its parameters, on its engine."""
        return Runner(self.wh, self.project, self.parameters, engine=self.engine)

    def freezes(self) -> list[Freeze]:
        """This study's freeze files, oldest first: a checked chain, every file one this warehouse wrote."""
        found = read_freezes(self.freezes_dir, self.protocol.name)
        check_recorded(self.wh, self.protocol.name, found, f"rankhouse study status {self.protocol.path}")
        return found

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
            _check_regular(item)
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
        with self.progress.loading(_shown(item.path)), expecting(item.sha256, _shown(item.path)):
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
        """SHA-256 over the row digests (one scan each, rankhouse/warehouse/freeze.py) of the same rows."""
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
                        f"changed in {where} after loading (they are not what {_shown(item.path)} gives); "
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

    # -- stages -----------------------------------------------------------------------------------
    def load_inputs(self, reload: bool = False) -> list[tuple[Input, LoadResult]]:
        """Load the label-free inputs (the first step of prepare, and of `rankhouse features extract`): rows
        edited since they were loaded are refused (before anything is written), `reload` loads every input
        again from its file instead. No label input is read, hashed or measured here."""
        for item in self.data_inputs:  # refused before anything is written
            _check_regular(item)
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

    def prepare(self, reload: bool = False, no_smoke: str | None = None) -> list[ModelRun]:
        """Load the label-free inputs (load_inputs), make the generated tables and build the prepare
        models, then their companion views; the labels are not opened. Published for readers at the end.
        `no_smoke`: why a full http extraction may start without a smoke batch (recorded)."""
        with self.wh.writing_inputs():  # one copy of the inputs for the loads and the generators
            self.load_inputs(reload)
            self._generate(no_smoke)
        assert "gate" not in self.wh.attached()
        runs = self.runner().run(self.prepare_models + self.companions, progress=self.progress)
        self.wh.publish()
        return runs

    def _generate(self, no_smoke: str | None = None) -> None:
        """Make the protocol's generated tables (rankhouse/generators.py: vectors, seeded plans, panels...),
        each added to the study's slice as it is made (a generator may build models that read it)."""

        def build(spec: str) -> None:
            self.runner().run(self.project.select(spec), progress=self.progress)

        keys = [f"generate.{item.key}" for item in self.protocol.generated]
        self.wh.sql("DELETE FROM meta.loads WHERE origin LIKE 'generate.%' AND NOT list_contains(?, origin)", [keys])
        with self.wh.writing_inputs():
            for item in self.protocol.generated:
                produced: list[tuple[str, dict, str | None, str]] = []

                def made(table: str, key: dict, source: str | None, origin: str = f"generate.{item.key}") -> None:
                    produced.append((table, key, source, origin))  # noqa: B023 - used within the iteration

                context = Context(
                    self.wh, self.progress.say, self.progress.bar, build, self.progress.meter, made, no_smoke
                )
                GENERATORS[item.kind].run(context, item.key, item.options)
                if not produced:
                    raise RankhouseError(
                        f"[generate.{item.key}] ({item.kind}) named none of the rows it made (Context.produced): "
                        "the study's slice of the inputs would leave them out"
                    )
                self._record_slice(produced, f"generate.{item.key}")

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
            "protocol": {"path": _shown(self.protocol.path), "sha256": self.protocol.sha256},
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
        `known`'s entry without a canonical export unless `full` (rankhouse/warehouse/freeze.py: row digest)."""
        recorded = known.record["tables"] if known is not None else {}
        same_engine = known is not None and known.record.get("duckdb_version") == duckdb.__version__
        derived = self.derived_tables()
        digests = {}
        for table, grain in self.frozen_tables().items():
            if not self.wh.table_exists(table):
                digests[table] = None
                continue
            quick = row_digest(self.wh, table)
            before = recorded.get(table) or {}
            if same_engine and not full and before.get("quick") == quick:
                digests[table] = before
            elif table in derived and "sha256" not in before:
                digests[table] = {"rows": self.wh.sql(f"SELECT count(*) FROM {table}")[0][0], "quick": quick}
            else:
                digest, rows = table_digest(self.wh, table, grain, export)
                digests[table] = {"sha256": digest, "rows": rows, "quick": quick}
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
            raise RankhouseError(f"study {self.protocol.name} has no freeze to supersede")
        if latest is not None:
            if supersedes is None:
                unplanned = [] if latest.record.get("plan") else [f"{latest.freeze_id} records no evaluate plan"]
                changes = "; ".join(describe_changes(latest.record, snapshot) + unplanned)
                raise RankhouseError(
                    f"study {self.protocol.name} is frozen as {latest.freeze_id} and has changed since ({changes}). "
                    f"A correction is a new freeze: rankhouse study freeze {self.protocol.path} "
                    f"--supersedes {latest.freeze_id} --reason '...'"
                )
            if supersedes != latest.freeze_id:
                raise RankhouseError(f"--supersedes must name the latest freeze, {latest.freeze_id}, not {supersedes}")
            if not (reason or "").strip():
                raise RankhouseError("a superseding freeze needs --reason saying what was corrected and why")
            if _content(latest.record) == snapshot_content:
                raise RankhouseError(f"nothing changed since {latest.freeze_id}: there is nothing to correct")
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
            i.key: {"path": _shown(i.path), "sha256": digests[i.key], "loader": i.loader}
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
            "protocol": {"path": _shown(self.protocol.path), "sha256": self.protocol.sha256},
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

    def evaluate(self, reload: bool = False, full: bool = False) -> Evaluation:
        """Verify the latest freeze (`full`: every table's canonical export again) and its evaluate plan,
        load the label inputs (each read once, into the study's own labels file) and open the gate, build
        the evaluate models there, keep their results by freeze. Labels edited since they were loaded
        are refused; `reload` loads them again from their files."""
        existing = self.freezes()
        if not existing:
            raise RankhouseError(f"study {self.protocol.name} has no freeze yet: run `rankhouse study freeze` first")
        freeze = existing[-1]
        problems = self.verify(freeze, full)
        if problems:
            raise RankhouseError(
                f"the labels stay closed: study {self.protocol.name} changed since freeze {freeze.freeze_id}:\n  "
                + "\n  ".join(problems)
            )
        if freeze.record.get("plan") is None:
            raise RankhouseError(
                f"the labels stay closed: freeze {freeze.freeze_id} was made before freezes recorded the evaluate "
                "plan, so its evaluation is not covered; record it in a new freeze first: rankhouse study freeze "
                f"{self.protocol.path} --supersedes {freeze.freeze_id} --reason 'record the evaluate plan'"
            )
        if reload:
            self.reload(labels=True)
        self.wh.close_gate()
        loaded = self._load(self.label_inputs)
        self.wh.open_gate(verified_freeze=freeze.freeze_id)
        problems = self.content_problems(labels=True, full=full)
        if problems:
            self.wh.close_gate(publish_labels=False)
            raise RankhouseError(
                f"the labels stay closed: study {self.protocol.name}'s labels changed since they were loaded:\n  "
                + "\n  ".join(problems)
            )
        self._record_contents(loaded)
        runner = self.runner()
        runs = runner.run(self.evaluate_models, progress=self.progress)
        new = self._keep_results(freeze)
        fingerprints = {name: runner.fingerprint(name) for name in self.evaluate_models}
        self.wh.sql(
            "INSERT INTO meta.evaluations VALUES (?, current_localtimestamp(), ?)",
            [freeze.freeze_id, json.dumps(fingerprints, sort_keys=True)],
        )
        self.wh.publish()
        return Evaluation(freeze, runs, new)

    def result_models(self) -> list[str]:
        """The evaluate tables whose rows are results (measures, intervals, tests), kept in the namespace's
        results.* per freeze; the others hold labels (judgments, judged rankings: Project.holds_labels) and
        stay in the study's labels file."""
        return [
            m for m in self.evaluate_models
            if self.project.models[m].materialized == "table" and not self.project.holds_labels(m)
        ]  # fmt: skip

    def _keep_results(self, freeze: Freeze) -> bool:
        """Copy evaluate results to results.<model> under the freeze id; re-evaluation must agree (the same
        row digest, or else the same canonical export: row digests that differ may still be equal results,
        e.g. 0.0 and -0.0)."""
        tables = [self.project.models[m] for m in self.result_models()]
        stored = [
            m for m in tables
            if self.wh.table_exists(f"results.{m.name}")
            and self.wh.sql(f"SELECT count(*) FROM results.{m.name} WHERE freeze_id = ?", [freeze.freeze_id])[0][0]
        ]  # fmt: skip
        for model in stored:
            kept = f"(SELECT * EXCLUDE (freeze_id) FROM results.{model.name} WHERE freeze_id = '{freeze.freeze_id}')"
            if row_digest(self.wh, kept) == row_digest(self.wh, model.table):
                continue
            if table_digest(self.wh, kept, model.grain)[0] != table_digest(self.wh, model.table, model.grain)[0]:
                raise RankhouseError(
                    f"freeze {freeze.freeze_id} already has results in results.{model.name} and this evaluation "
                    "gives different ones (an evaluate model or its parameters changed). Results are never "
                    "replaced: record the correction as a new freeze with --supersedes and --reason."
                )
        if stored:
            self.say(f"freeze {freeze.freeze_id} was evaluated before; the results are identical")
            return False
        ns = self.wh.catalog
        with self.wh.transaction():
            for model in tables:
                self.wh.sql(
                    f"CREATE TABLE IF NOT EXISTS {ns}.results.{model.name} AS "
                    f"SELECT CAST(NULL AS VARCHAR) AS freeze_id, * FROM {model.table} WHERE false"
                )
                self.wh.sql(f"INSERT INTO {ns}.results.{model.name} SELECT ?, * FROM {model.table}", [freeze.freeze_id])
        self.say(f"results of {freeze.freeze_id} kept in {self.protocol.name}.results.* "
                 f"({', '.join(m.name for m in tables)})")  # fmt: skip
        return True

    def run(self) -> Evaluation:
        """prepare, freeze (reusing an identical freeze), evaluate."""
        self.prepare()
        self.freeze()
        return self.evaluate()

    def status(self, full: bool = False) -> list[str]:
        """Where the study stands, line by line: stage, inputs, prepare models, freezes, evaluation
        (`full`: the latest freeze verified with every table's canonical export). Before a freeze, no
        label input is read: nothing printed is computed from one."""
        lines = [
            f"study      {self.protocol.name}" + (f": {self.protocol.description}" if self.protocol.description else "")
        ]
        lines.append(f"protocol   {self.protocol.path} (sha256 {self.protocol.sha256[:16]}...)")
        lines.append(f"warehouse  {self.wh.path}; namespace {self.protocol.name}; freezes {self.freezes_dir}")
        labelled = f"; {len(self.label_inputs)} label files read at evaluate" if self.label_inputs else ""
        try:
            self.check_inputs()
            lines.append(f"inputs     {len(self.data_inputs)} files, all as the protocol expects{labelled}")
        except RankhouseError as exc:
            lines.append(f"inputs     {exc}")
        runner = self.runner()
        built = runner.last_builds(self.prepare_models)
        stale = [m for m in self.prepare_models if built[m] != runner.fingerprint(m)]
        lines.append(
            f"prepare    {len(self.prepare_models) - len(stale)} of {len(self.prepare_models)} models current"
            + (f" (to build: {', '.join(stale)})" if stale else "")
        )
        stage = "new" if stale else "prepared"
        existing = self.freezes()
        for freeze in existing:
            note = f", supersedes {freeze.supersedes}: {freeze.reason}" if freeze.supersedes else ""
            lines.append(f"freeze     {freeze.freeze_id} at {freeze.record['created_at']}{note}")
        if existing:
            latest = existing[-1]
            problems = self.verify(latest, full)
            lines.append(
                f"current    {latest.freeze_id}: " + ("intact" if not problems else "CHANGED: " + "; ".join(problems))
            )
            if latest.record.get("plan") is None:
                lines.append(f"plan       {latest.freeze_id} records no evaluate plan: freeze again before evaluating")
            evaluated = self.wh.sql(
                "SELECT max(evaluated_at) FROM meta.evaluations WHERE freeze_id = ?", [latest.freeze_id]
            )[0][0]
            stage = "evaluated" if evaluated else "frozen"
            if evaluated:
                lines.append(f"evaluated  {latest.freeze_id} at {evaluated:%Y-%m-%d %H:%M:%S}")
            if problems:
                stage += " (changed since the freeze)"
        else:
            lines.append("freeze     none yet")
        lines.insert(1, f"stage      {stage}")
        return lines


def _check_regular(item: Input) -> None:
    """A study's input is a regular file: one whose bytes can be hashed and are the bytes then parsed (a
    named pipe or a device would give the hash one content and the loader another)."""
    try:
        mode = os.stat(item.path).st_mode
    except OSError:
        return  # the loader names what is wrong with it
    if not stat.S_ISREG(mode):
        raise RankhouseError(
            f"input {item.key}: {item.path} is not a regular file (a pipe, a device or a folder): a study reads "
            "its inputs from files, whose bytes are hashed as they are parsed"
        )


def _shown(path: Path) -> str:
    """A path as recorded in a freeze: relative to the current directory when below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


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
