"""The registry: every part a study plugs into the core, by name, in one place.

A study is a package: `rankhouse/studies/<name>/` in this repository, or any installed package that
declares an entry point in the group `rankhouse.studies` (`[project.entry-points."rankhouse.studies"]
mystudy = "mystudy"`, as sqlglot's dialects and ir_measures' providers plug in). Importing the package
registers its parts with `register(...)`; it names its code as text ("module:attribute"), imported only
when a part is used, so that registering imports nothing but this module. The kinds of parts:

    Loader     a protocol's `[inputs.<key>] loader`: a file format, the tables it fills
    Generator  a protocol's `[generate.<key>] kind`: a table the prepare stage makes itself
    Function   a Python function a model calls (its header's `functions:`)
    Writer     a protocol's `[outputs] writer`: the module that writes the study's outputs
    ReportKind `rankhouse report`'s sections for a writer's output directory
    Tables     the study's own DDL: its raw.* (and meta.*) tables in the inputs file, its labels tables
    Models     a folder of models laid out as models/ (<group>/<model>.sql), for a study outside the
               repository (the repository's studies keep theirs in models/<name>/)
    Command    a command (or group of commands) of the `rankhouse` command line

The core registers its own shared parts first (the loaders of the shared formats, the plans and vectors
generators, the TREC writer: `core()`), then every study package is imported (`fill()`), on the first
use of the registry, never at `import rankhouse`. A name registered twice is an error naming both
registrations. The old names read from here: rankhouse.loaders.LOADERS, generators.GENERATORS,
functions.FUNCTIONS, study.outputs.WRITERS.

    >>> entries(Loader)["trec.run"].labels, "lanes" in entries(Writer)
    (False, True)
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
import threading
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankhouse.errors import RankhouseError

if TYPE_CHECKING:
    from rankhouse.generators import Context

ENTRY_POINTS = "rankhouse.studies"  # the entry-point group of studies outside the repository
STUDIES = Path(__file__).resolve().parent / "studies"  # the repository's study packages


def resolve(target: str) -> Any:
    """The Python object a target names: "module:attribute" (imported now), or "module" alone."""
    module, _, attribute = target.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


@dataclass(frozen=True)
class Loader:
    """A named loader, as a study protocol names it; `labels` loaders write only to the labels file.

    `target`: the function ("module:attribute", or the function itself). `writes`: the tables a load
    fills, each with the column that holds the name it loads under (None: the load replaces the whole
    table), so that the rows of one load can be digested and checked (rankhouse/study/ledger.py). Labels
    tables are named as in the labels file.
    """

    name: str
    target: Callable[..., Any] | str
    labels: bool
    writes: tuple[tuple[str, str | None], ...]

    @property
    def key(self) -> str:
        return self.name

    @property
    def load(self) -> Callable[..., Any]:
        """The loader function (its module imported on first use)."""
        return resolve(self.target) if isinstance(self.target, str) else self.target


@dataclass(frozen=True)
class Generator:
    """A kind of generated table: its required options and the function (module:attribute) that makes it."""

    kind: str
    options: tuple[str, ...]
    target: str
    description: str

    @property
    def key(self) -> str:
        return self.kind

    def run(self, context: Context, key: str, options: dict) -> None:
        """Make the table of protocol entry `key`."""
        resolve(self.target)(context, key, options)


@dataclass(frozen=True)
class Function:
    """A scalar SQL function implemented in Python: its name, callable and DuckDB signature. `arrow`: the
    callable takes and returns Arrow arrays, a chunk of rows at a time (DuckDB's vectorized UDF), rather
    than one row's Python values."""

    name: str
    target: str  # "module:attribute"
    parameters: tuple[str, ...]
    returns: str
    description: str
    arrow: bool = False

    @property
    def key(self) -> str:
        return self.name

    def load(self):  # noqa: ANN201 - any callable
        """The Python callable (its module imported on first use)."""
        return resolve(self.target)


@dataclass(frozen=True)
class Writer:
    """A study writer: the module with `write(study, evaluation, out)`, `table(study, evaluation)` and,
    optionally, `needs(protocol, built)` (rankhouse/study/outputs.py)."""

    name: str
    target: str  # the module

    @property
    def key(self) -> str:
        return self.name


@dataclass(frozen=True)
class ReportKind:
    """How `rankhouse report` draws a writer's output directory (rankhouse/report/sections.py).

    sections      the sections after the common ones, in order: a shared section's name ("results",
                  "contrasts", "classes") or a function "module:attribute" taking the Folder and
                  returning a Section (or None)
    methods       the preferred order of the methods (the rest follow, sorted)
    measures      measures of its own, shown after the protocol's in this order (the rest follow, sorted)
    counts        those of its measures that are counts (shown as whole numbers)
    unit, units   what a row of per_query values is (query/queries, topic/topics, task/tasks)
    note          a note above the results table
    subsets_only  the results tables are the subsets' only (evidence: one table per task subset)
    by_measure    results.json's contrasts are {contrast: {measure: {mean, ci_low, ci_high}}}
    recognise     "module:attribute", a test of a Folder written before provenance.json named the writer
    facts         "module:attribute", (results.json) -> (facts, banner): lines under the title, a warning
    own_markdown  the writer writes report.md itself; the report appends its figures to it, the
                  sections of `figure_only` with their figures only
    """

    name: str
    sections: tuple[str, ...] = ("results",)
    methods: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()
    counts: tuple[str, ...] = ()
    unit: str = "query"
    units: str = "queries"
    note: str = ""
    subsets_only: bool = False
    by_measure: bool = False
    recognise: str | None = None
    facts: str | None = None
    own_markdown: bool = False
    figure_only: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.name


CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS ([\w.]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Tables:
    """A study's own DDL: `inputs`, a SQL file of its tables in the inputs file (raw.*, and meta.* for
    bookkeeping no model reads), and `labels`, a SQL file of its tables in each study's labels file
    (unqualified names, read by models as gate.<name>). Run after the core's (sql/)."""

    study: str
    inputs: Path | None = None
    labels: Path | None = None

    @property
    def key(self) -> str:
        return self.study

    def ddl(self, kind: str) -> str:
        """The SQL of the file of `kind` ("warehouse": the inputs file, or "labels"), or ""."""
        path = {"warehouse": self.inputs, "labels": self.labels}.get(kind)
        return path.read_text(encoding="utf-8") if path is not None else ""


@dataclass(frozen=True)
class Models:
    """A folder of a study's models, laid out as rankhouse's models/ (`<group>/<model>.sql`, its
    staging adapters in `<study>/staging/`): for a study that lives outside the repository."""

    study: str
    root: Path

    @property
    def key(self) -> str:
        return self.study


@dataclass(frozen=True)
class Command:
    """A command of the command line: `target` is a typer.Typer (a group of commands) or a function
    (one command, its docstring its help), "module:attribute"."""

    name: str
    target: str

    @property
    def key(self) -> str:
        return self.name


Entry = Loader | Generator | Function | Writer | ReportKind | Tables | Models | Command
KINDS: tuple[type, ...] = (Loader, Generator, Function, Writer, ReportKind, Tables, Models, Command)
LABELS = {Loader: "loader", Generator: "generator", Function: "SQL function", Writer: "writer",
          ReportKind: "report kind", Tables: "tables of study", Models: "models of study",
          Command: "command"}  # fmt: skip


@dataclass
class _State:
    entries: dict[type, dict[str, Entry]] = field(default_factory=lambda: {kind: {} for kind in KINDS})
    origins: dict[tuple[type, str], str] = field(default_factory=dict)
    core: bool = False  # the core's parts registered
    filled: bool = False
    filling: bool = False


_state = _State()
_lock = threading.RLock()


def register(*parts: Entry, origin: str | None = None) -> None:
    """Register a study's parts. `origin` (default: the calling module) is what an error names; a name
    already registered is refused, naming both registrations.

    Example, in a study package's __init__.py:
        register(Loader("mine.runs", "mystudy.loaders:load_runs", False, (("raw.my_runs", "name"),)))
    """
    origin = origin or sys._getframe(1).f_globals.get("__name__", "?")
    with _lock:
        for part in parts:
            kind = type(part)
            if kind not in _state.entries:
                raise RankhouseError(f"{origin}: cannot register {part!r}: not a part of a study")
            key = part.key
            if key in _state.entries[kind]:
                first = _state.origins[(kind, key)]
                raise RankhouseError(f"{LABELS[kind]} {key!r} is registered twice: by {first} and by {origin}")
            if kind is Tables:
                _check_tables(part, origin)
            _state.entries[kind][key] = part
            _state.origins[(kind, key)] = origin


def _check_tables(part: Tables, origin: str) -> None:
    """A study's tables: each in its file's schemas, and none declared by the core or by another study."""
    from rankhouse.paths import read_sql

    for kind, own in (("warehouse", part.inputs), ("labels", part.labels)):
        if own is None:
            continue
        if not own.is_file():
            raise RankhouseError(f"{origin}: the {kind} DDL {own} of study {part.study} does not exist")
        declared = {name.lower(): f"sql/{kind}.sql" for name in CREATE_TABLE.findall(read_sql(f"{kind}.sql"))}
        for other in _state.entries[Tables].values():
            declared |= {name.lower(): f"study {other.study} ({origin_of(other)})" for name in
                         CREATE_TABLE.findall(other.ddl(kind))}  # fmt: skip
        for name in CREATE_TABLE.findall(part.ddl(kind)):
            schema = name.split(".")[0].lower() if "." in name else None
            if (kind == "warehouse" and schema not in ("raw", "meta")) or (kind == "labels" and schema is not None):
                where = "raw.<name> or meta.<name>" if kind == "warehouse" else "an unqualified name"
                raise RankhouseError(f"{own}: table {name} of study {part.study} is not {where}")
            if name.lower() in declared:
                raise RankhouseError(
                    f"table {name} is declared twice: by {declared[name.lower()]} and by study {part.study} ({own})"
                )


def forget(origin_prefix: str) -> None:
    """Remove every part registered by an origin starting with `origin_prefix` (an analyst project's
    modules, rankhouse/project.py, when another project is put in use)."""
    with _lock:
        for (kind, key), origin in list(_state.origins.items()):
            if origin.startswith(origin_prefix):
                _state.entries[kind].pop(key, None)
                del _state.origins[(kind, key)]


def origin_of(part: Entry) -> str:
    """What registered a part (a module, an entry point)."""
    return _state.origins.get((type(part), part.key), "?")


def entries(kind: type) -> dict[str, Entry]:
    """Every registered part of a kind, by name (the registry filled first)."""
    fill()
    return _state.entries[kind]


def fill() -> None:
    """Register the core's parts, then import every study package: those under rankhouse/studies/ and
    every `rankhouse.studies` entry point. Once per process; a study that fails to import is an error
    naming it (and again at the next use: the packages imported already are not registered twice)."""
    if _state.filled or _state.filling:
        return
    with _lock:
        if _state.filled or _state.filling:
            return
        _state.filling = True
        try:
            if not _state.core:
                core()
                _state.core = True
            for info in sorted(pkgutil.iter_modules([str(STUDIES)]), key=lambda i: i.name):
                if info.ispkg:
                    _import(f"rankhouse.studies.{info.name}", f"rankhouse.studies.{info.name}")
            for point in _entry_points():
                _import(point.value, f"entry point {point.name} = {point.value!r} ({_distribution(point)})")
            _state.filled = True
        finally:
            _state.filling = False


def _entry_points() -> list:
    """The `rankhouse.studies` entry points of the installed distributions (importlib.metadata, imported and
    asked only where some distribution's metadata may declare one: _may_declare)."""
    if not _may_declare():
        return []
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINTS), key=lambda p: (p.name, p.value))


def _may_declare() -> bool:
    """Whether an installed distribution may declare an entry point of ENTRY_POINTS: the entry_points.txt of
    some `*.dist-info` or `*.egg-info` folder of sys.path names the group, or sys.path holds a file (a zip
    or an egg) or an `.egg` folder, or a finder other than Python's path finder lists distributions (then
    importlib.metadata decides). A few milliseconds, where importing importlib.metadata takes tens."""
    from importlib.machinery import PathFinder

    if any(hasattr(finder, "find_distributions") and finder is not PathFinder for finder in sys.meta_path):
        return True
    for entry in sys.path:
        folder = Path(entry or ".")
        if folder.is_file() or folder.suffix == ".egg":
            return True
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    if ENTRY_POINTS in (folder / name / "entry_points.txt").read_text(errors="replace"):
                        return True
                except OSError:
                    continue
    return False


def _distribution(point) -> str:  # noqa: ANN001 - an importlib.metadata.EntryPoint
    dist = getattr(point, "dist", None)
    return f"distribution {dist.name} {dist.version}" if dist is not None else "no distribution"


def _import(module: str, what: str) -> None:
    try:
        importlib.import_module(module.partition(":")[0])
    except RankhouseError:
        raise
    except Exception as exc:  # a study's own failure, named with the study
        raise RankhouseError(f"study {what} failed on import: {type(exc).__name__}: {exc}") from exc


def core() -> None:
    """The core's own parts: the loaders of the shared formats (TREC, CSV, BEIR, SciFact), the generated
    tables every study may use (vectors, plans, panels, blocks) and the TREC writer (the default)."""
    trec, texts, beir = "rankhouse.loaders.trec", "rankhouse.loaders.texts", "rankhouse.loaders.beir"
    register(
        Loader("trec.run", f"{trec}:load_run", False, (("raw.runs", "run_id"), ("raw.run_blocks", "run_id"))),
        Loader("trec.qrels", f"{trec}:load_qrels", True, (("qrels", None),)),
        Loader("trec.qrels_jg", f"{trec}:load_qrels_jg", True, (("qrels_jg", None),)),
        Loader("trec.prefs", f"{trec}:load_prefs", True, (("prefs", None),)),
        Loader("trec.qrels_prefs", f"{trec}:load_qrels_prefs", True, (("prefs", None),)),
        Loader("trec.zscores", f"{trec}:load_zscores", True, (("zscores", None),)),
        Loader("csv.documents", f"{texts}:load_documents", False, (("raw.documents", "corpus"),)),
        Loader("csv.queries", f"{texts}:load_queries", False, (("raw.queries", "corpus"),)),
        Loader("csv.document_classes", f"{texts}:load_document_classes", True, (("document_classes", "corpus"),)),
        Loader("csv.query_classes", f"{texts}:load_query_classes", True, (("query_classes", "corpus"),)),
        Loader("scifact.documents", f"{beir}:load_scifact_documents", False, (("raw.documents", "corpus"),)),
        Loader("scifact.queries", f"{beir}:load_scifact_queries", False, (("raw.queries", "corpus"),)),
        Loader("beir.corpus", f"{beir}:load_beir_corpus", False, (("raw.documents", "corpus"),)),
        Loader("beir.queries", f"{beir}:load_beir_queries", False, (("raw.queries", "corpus"),)),
        Loader("beir.qrels", f"{beir}:load_beir_qrels", True, (("qrels", None),)),
        Generator("vectors", ("corpus",), "rankhouse.vectors:generate_vectors",
                  "MiniLM vectors of a corpus's documents and queries, through the vector cache"),
        Generator("resample_plan", ("corpus", "seed", "replicates"), "rankhouse.resample:generate_plan",
                  "a seeded paired-bootstrap plan over a corpus's queries, in row order"),
        Generator("cluster_plan", ("corpus", "seed", "replicates"), "rankhouse.resample:generate_cluster_plan",
                  "a seeded bootstrap plan over a corpus's query groups (E3's semantic groups), in group_row order"),
        Generator("permutation_plan", ("corpus", "seed", "replicates"), "rankhouse.resample:generate_permutation_plan",
                  "a seeded sign-flip plan (paired randomization test) over a corpus's queries, in row order"),
        Generator("null_panel", ("corpus", "seed", "size"), "rankhouse.resample:generate_panel",
                  "a seeded random panel of a corpus's documents (a null reference, seed 003); size \"all\": "
                  "a seeded order of every document"),
        Generator("query_blocks", ("corpus", "seed", "blocks"), "rankhouse.resample:generate_blocks",
                  "a seeded partition of a corpus's queries into held-out blocks (seed 003, section 9)"),
        Function("bm25_full_ranking", "rankhouse.bm25:full_ranking_udf",
                 ("STRUCT(query_row INTEGER, terms INTEGER[])[]", "STRUCT(doc_rows INTEGER[], weight_units BIGINT[])[]",
                  "BIGINT"), "STRUCT(query_row INTEGER[], doc_row INTEGER[], score DOUBLE[], rank BIGINT[])",
                 "BM25's full ranking of a part of the queries (seed 004; sql/macros/bm25.sql's bm25_full_ranking): "
                 "(queries with their term indices, every term's postings, the number of documents) -> "
                 "(query_row, doc_row, score, rank) as parallel lists", arrow=True),
        Function("ranked_cosines", "rankhouse.ranking:ranked_cosines_udf",
                 ("BIGINT[]", "FLOAT[][]", "BIGINT[]", "FLOAT[][]"),
                 "STRUCT(query_row BIGINT[], doc_row BIGINT[], score FLOAT[], rank BIGINT[])",
                 "the full rankings of a part of the queries by inner product (list_inner_product's bits) "
                 "descending, then doc_row (the seed order): (query rows, their vectors, doc_rows ascending, "
                 "their vectors) -> (query_row, doc_row, score, rank) as parallel lists", arrow=True),
        Writer("trec", "rankhouse.study.trec"),
        ReportKind("trec", ("results", "rankhouse.report.sections:per_query_section"),
                   note="Means over the queries (trec_eval's summary), counts summed."),
        origin="rankhouse.registry (the core)",
    )  # fmt: skip


class View(MutableMapping):
    """A registry kind as a mapping by name (the old LOADERS, GENERATORS, FUNCTIONS, WRITERS): reading
    fills the registry; assigning replaces an entry (as a test's monkeypatch does), deleting removes it."""

    def __init__(self, kind: type, value: Callable[[Entry], Any] = lambda entry: entry) -> None:
        self._kind = kind
        self._value = value

    def __getitem__(self, name: str) -> Any:
        return self._value(entries(self._kind)[name])

    def __setitem__(self, name: str, entry: Any) -> None:
        fill()
        if self._kind is Writer and isinstance(entry, str):
            entry = Writer(name, entry)
        with _lock:
            _state.entries[self._kind][name] = entry
            _state.origins[(self._kind, name)] = sys._getframe(1).f_globals.get("__name__", "?")

    def __delitem__(self, name: str) -> None:
        fill()
        with _lock:
            del _state.entries[self._kind][name]
            _state.origins.pop((self._kind, name), None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(entries(self._kind)))

    def __len__(self) -> int:
        return len(entries(self._kind))

    def __repr__(self) -> str:
        return f"View({LABELS[self._kind]}: {', '.join(self)})"
