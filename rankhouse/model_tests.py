"""Model tests (`rankhouse test`): models run on a small fixture in an in-memory warehouse, each output
compared with an expected file, as dbt's unit tests and `sqlmesh test` do (docs/projects.md).

A fixture is a folder:

    tests/first_relevant/
      fixture.toml                       models = "measure_first_relevant"  (the models tested, a
                                         selection in dbt syntax), [parameters] (the models' parameters)
      inputs/models.judged_ranking.csv   an input table, named as the table: raw.<t> or gate.<t> (loaded
                                         inputs and labels, sql/warehouse.sql and sql/labels.sql), or
                                         models.<m> (rows that stand in for model m); CSV or TOML
      measure_first_relevant.csv         the expected output of each model tested

The fixture's input tables are loaded into a throw-away warehouse; every model tested is built, with
every model it reads that the fixture does not give (an input standing in for a model cuts the graph
there: what it reads is not built); each model tested is then written as canonical CSV (canonical_csv)
and compared with its expected file. `update` writes the expected files instead, for review.

Every fixture is read and checked, and every one run, before any file is written: a broken fixture is
an error naming its file, line and rule, and nothing is updated. rankhouse's own golden tests
(tests/golden/<fixture>/, tests/measures/test_snapshots.py) are fixtures of this form.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path

import duckdb
import pyarrow as pa

from rankhouse import functions
from rankhouse.errors import AuditError, InputError, ModelError, RankhouseError, did_you_mean
from rankhouse.project import FileError, line_of, model_roots, read_toml
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.catalog import declared_parameters, load_models, model_paths
from rankhouse.warehouse.dag import Project, selection_closure, selection_items
from rankhouse.warehouse.render import render
from rankhouse.warehouse.runner import Runner

FIXTURE_FILE = "fixture.toml"
INPUTS = "inputs"
SCHEMAS = ("raw", "gate", "models")
FORMATS = (".csv", ".toml")
KEYS = ("models", "parameters", "description")
MAX_DIFFERENCES = 20
LINE = "rh_line"  # the column that carries each input row's line in its file
INTEGER = re.compile(r"^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$")


@dataclass(frozen=True)
class InputTable:
    """One input file of a fixture: the table it fills (`raw.runs`, `gate.qrels`, `models.rankings`)."""

    table: str
    path: Path

    @property
    def schema(self) -> str:
        return self.table.split(".")[0]

    @property
    def name(self) -> str:
        return self.table.split(".")[1]


@dataclass(frozen=True)
class Fixture:
    """A fixture folder, read and checked against the project's models."""

    folder: Path
    selection: str
    parameters: dict
    inputs: tuple[InputTable, ...]
    description: str
    project: Project
    tested: tuple[str, ...]  # the models compared with an expected file, in dependency order
    builds: tuple[str, ...]  # the models built: those tested and what they read that is not given

    @property
    def given(self) -> frozenset[str]:
        """The models the fixture's inputs stand in for."""
        return frozenset(i.name for i in self.inputs if i.schema == "models")

    def expected(self, model: str) -> Path:
        return self.folder / f"{model}.csv"


@dataclass(frozen=True)
class Outcome:
    """What a model test found: `passed`, `failed` (with why), `written` or `updated` (an expected file)."""

    fixture: Path
    model: str
    status: str
    detail: str = ""


@dataclass
class Rows:
    """An input file's rows as text (None for NULL), with the line each starts on."""

    columns: list[str]
    rows: list[list[str | None]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


# -- finding and reading fixtures ------------------------------------------------------------------
def find_fixtures(paths: list[Path]) -> list[Path]:
    """The fixture folders of `paths`: each a fixture folder (with fixture.toml) or a folder of them, at any
    depth; a path that is neither is an error."""
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise RankhouseError(f"{path}: no such fixture or folder of fixtures")
        if (path / FIXTURE_FILE).is_file():
            found.append(path)
            continue
        inside = sorted(p.parent for p in path.rglob(FIXTURE_FILE)) if path.is_dir() else []
        if not inside:
            raise RankhouseError(
                f"{path}: holds no fixture (a folder with {FIXTURE_FILE}, its inputs/ and expected files: "
                "docs/projects.md)"
            )
        found += inside
    return list(dict.fromkeys(found))


def read_fixture(folder: Path) -> Fixture:
    """Read a fixture folder and check it against the models (of the project in use): what it tests, the
    tables it gives, its parameters and its expected files. Errors name the file, line and rule."""
    path = folder / FIXTURE_FILE
    spec, text = read_toml(path)
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise InputError(path, line_of(text, unknown[0]), f"unknown key {unknown[0]}; known: {', '.join(KEYS)}")
    selection = spec.get("models")
    if not isinstance(selection, str) or not selection_items(selection):
        raise InputError(path, line_of(text, "models"), 'needs models = "<the models it tests>" (dbt selection)')
    parameters = spec.get("parameters", {})
    if not isinstance(parameters, dict):
        raise InputError(path, line_of(text, "parameters"), "parameters is a table: [parameters]")
    inputs = _input_files(folder)
    project = _project(path, text, selection, parameters, inputs)
    given = {i.name for i in inputs if i.schema == "models"}
    named = [name for name in project.named(selection) if name in given]
    if named:
        raise InputError(path, line_of(text, "models"), f"tests {named[0]}, which inputs/models.{named[0]} gives")
    try:
        tested = [m for m in project.select(selection) if m not in given]
    except ModelError as exc:
        raise InputError(path, line_of(text, "models"), str(exc)) from None
    builds = _builds(project, tested, given)
    _check_inputs(project, inputs, builds)
    stale = sorted(p.name for p in folder.glob("*.csv") if p.stem not in tested)
    if stale:
        rule = f"is the expected output of no model the fixture tests ({', '.join(tested)})"
        raise FileError(folder / stale[0], rule, "remove it, or add its model to models in fixture.toml")
    description = spec.get("description", "")
    return Fixture(folder, selection, parameters, inputs, str(description), project, tuple(tested), tuple(builds))


def _input_files(folder: Path) -> tuple[InputTable, ...]:
    """The files of inputs/, each named `<schema>.<table>.csv` or `.toml`."""
    where = folder / INPUTS
    if not where.is_dir():
        raise RankhouseError(
            f"{folder}: no {INPUTS}/ folder: a fixture gives the tables its models read, one file each "
            "(inputs/raw.runs.csv, inputs/models.rankings.csv, ...)"
        )
    tables: dict[str, Path] = {}
    for path in sorted(where.iterdir()):
        parts = path.name.split(".")
        if path.suffix not in FORMATS or len(parts) != 3 or parts[0] not in SCHEMAS or not parts[1]:
            rule = "an input is named <schema>.<table>.csv or .toml, schema raw, gate or models"
            raise FileError(path, rule, "e.g. inputs/models.rankings.csv")
        table = f"{parts[0]}.{parts[1]}"
        if table in tables:
            raise FileError(path, f"gives {table}, which {tables[table].name} gives too")
        tables[table] = path
    if not tables:
        raise RankhouseError(f"{where}: no input table: a fixture gives the tables its models read")
    return tuple(InputTable(table, path) for table, path in tables.items())


def _project(path: Path, text: str, selection: str, parameters: dict, inputs: tuple[InputTable, ...]) -> Project:
    """The models a fixture needs, rendered with its parameters; unknown models and parameters refused."""
    paths = model_paths(model_roots())
    for item in inputs:
        if item.schema == "models" and item.name not in paths:
            raise FileError(item.path, f"models.{item.name} is no model{did_you_mean(item.name, paths)}")
    declared = declared_parameters(load_models(model_roots()).values())
    for key in parameters:
        if key not in declared:
            raise InputError(
                path, line_of(text, key), f"no model declares parameter {key}{did_you_mean(key, declared)}"
            )
    closure = selection_closure(selection)
    if closure is not None:
        missing = [name for name in closure if name not in paths]
        if missing:
            raise InputError(path, line_of(text, "models"), f"no model {missing[0]}{did_you_mean(missing[0], paths)}")
        closure = closure + sorted({i.name for i in inputs if i.schema == "models"})
    try:
        return Project.load(params=parameters, closure=closure)
    except ModelError as exc:
        raise InputError(path, line_of(text, "parameters"), str(exc)) from None


def _builds(project: Project, tested: list[str], given: set[str]) -> list[str]:
    """The models to build for `tested`: they and every model they read, directly or not, up to the given."""
    needed: set[str] = set()
    todo = list(tested)
    while todo:
        name = todo.pop()
        if name in needed or name in given:
            continue
        needed.add(name)
        todo += project.parents[name]
    return [name for name in project.order if name in needed]


def _check_inputs(project: Project, inputs: tuple[InputTable, ...], builds: list[str]) -> None:
    """Every input must be a table the models built read (a source the DDL declares, or a model)."""
    read = {ref for name in builds for ref in project.references[name]}
    for item in inputs:
        if item.schema != "models" and item.table not in project.sources:
            known = sorted(s.split(".")[1] for s in project.sources if s.startswith(item.schema + "."))
            rule = f"{item.table} is no table of the warehouse{did_you_mean(item.name, known)}"
            raise FileError(
                item.path, rule, f"sql/{'warehouse' if item.schema == 'raw' else 'labels'}.sql declares them"
            )
        if item.table not in read:
            detail = f"it builds {', '.join(builds)}; they read {', '.join(sorted(read)) or 'nothing'}"
            raise FileError(item.path, f"no model the fixture builds reads {item.table}", detail)


# -- reading input files ---------------------------------------------------------------------------
def read_rows(path: Path) -> Rows:
    """An input file's rows: CSV (a header of column names, then rows; an empty field is NULL) or TOML
    (`rows = [{column = value, ...}, ...]` or `[[rows]]` tables; a column a row leaves out is NULL)."""
    return _toml_rows(path) if path.suffix == ".toml" else _csv_rows(path)


def _csv_rows(path: Path) -> Rows:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise FileError(path, "cannot read the file", exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise FileError(path, "is not UTF-8 text") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    found: Rows | None = None
    start = 1
    try:
        for row in reader:
            if found is None:
                _check_header(path, row)
                found = Rows(row)
            elif row:  # a blank line is no row
                if len(row) != len(found.columns):
                    raise InputError(path, start, f"has {len(row)} fields, the header {len(found.columns)}")
                found.rows.append([value if value != "" else None for value in row])
                found.lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(path, reader.line_num, "is not valid CSV", str(exc)) from None
    if found is None:
        raise InputError(path, 1, "is empty: a CSV file starts with a header line of column names")
    return found


def _check_header(path: Path, columns: list[str]) -> None:
    for column in columns:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", column):
            raise InputError(path, 1, f"column name {column!r} is not a plain name (letters, digits and _)")
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise InputError(path, 1, f"column {twice[0]} is named twice")


def _toml_rows(path: Path) -> Rows:
    spec, text = read_toml(path)
    rows = spec.get("rows")
    if set(spec) != {"rows"} or not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError(path, 1, "a TOML input holds rows = [{column = value, ...}, ...] (or [[rows]] tables) only")
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if re.match(r"^\s*\[\[\s*rows\s*\]\]", line)]
    lines = starts if len(starts) == len(rows) else [line_of(text, "rows")] * len(rows)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    for line, row in zip(lines, rows):
        try:
            _check_header(path, list(row))
        except InputError as exc:
            raise InputError(path, line, exc.rule) from None
    found = Rows(columns)
    for line, row in zip(lines, rows):
        found.rows.append([_text(row[c]) if c in row else None for c in columns])
        found.lines.append(line)
    return found


def _text(value: object) -> str:
    """A TOML value as the text DuckDB casts to the column's type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime, date, time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=str)
    return str(value)


# -- running a fixture -----------------------------------------------------------------------------
def run_fixture(fixture: Fixture) -> dict[str, str]:
    """Load a fixture's inputs into an in-memory warehouse, build its models and return each tested
    model's output as canonical CSV. An input value that is not of its column's type is an InputError
    (file, line, column); a model that fails to build or breaks an audit, a ModelError or AuditError."""
    with Warehouse(":memory:", say=lambda _: None) as wh:
        build_fixture(wh, fixture)
        return {name: canonical_csv(wh, f"models.{name}") for name in fixture.tested}


def build_fixture(wh: Warehouse, fixture: Fixture) -> None:
    """A fixture's inputs loaded into `wh` and its models built there, the gate left open (run_fixture; and
    rankhouse's own tests start from the warehouses of its golden fixtures)."""
    parameters = {k: v for k, v in fixture.parameters.items() if _declared(fixture.project, k)}
    sources = [i for i in fixture.inputs if i.schema == "raw"]
    if sources:
        with wh.writing_inputs():
            for item in sources:
                _fill(wh, item, f"raw.{item.name}", _types(wh, f"raw.{item.name}"))
    labels = [i for i in fixture.inputs if i.schema == "gate"]
    if labels:
        with wh.labels():
            for item in labels:
                _fill(wh, item, f"labels.main.{item.name}", _types(wh, f"labels.main.{item.name}"))
    wh.open_gate()
    stand_ins = [i for i in fixture.inputs if i.schema == "models"]
    types = model_types(fixture.project, parameters, [i.name for i in stand_ins]) if stand_ins else {}
    for item in stand_ins:
        home = wh.catalog if fixture.project.models[item.name].stage == "prepare" else "gate"
        _fill(wh, item, f'{home}.models."{item.name}"', types[item.name], create=True)
    Runner(wh, fixture.project, parameters).run(list(fixture.builds), given=fixture.given)


def _declared(project: Project, key: str) -> bool:
    return any(key in model.parameters for model in project.models.values())


def _types(wh: Warehouse, table: str) -> dict[str, str]:
    """A table's columns and their DuckDB types, in order."""
    return {name: kind for name, kind, *_ in wh.sql(f"DESCRIBE {table}")}


def model_types(project: Project, params: dict, names: list[str]) -> dict[str, dict[str, str]]:
    """The columns and types of models, found without building them: each, and every model it reads,
    made a view in a throw-away warehouse whose inputs are empty."""
    needed = set(names).union(*(project.ancestors(n) for n in names))
    with Warehouse(":memory:", say=lambda _: None) as scratch:
        scratch.open_gate()
        for name in project.order:
            if name in needed:
                model = project.models[name]
                functions.register(scratch.con, model.functions)
                scratch.sql(f'CREATE VIEW {scratch.catalog}.models."{name}" AS\n{render(model, params)}')
        return {name: _types(scratch, f"models.{name}") for name in names}


def _fill(wh: Warehouse, item: InputTable, target: str, types: dict[str, str], create: bool = False) -> None:
    """Load an input file into `target`, each value cast to its column's type (checked first, so that a
    value that is not of its type is an error naming its line); with `create`, as a new table of every
    column of `types` (those the file leaves out NULL)."""
    rows = read_rows(item.path)
    unknown = [c for c in rows.columns if c not in types]
    if unknown:
        raise InputError(
            item.path, rows.lines[0] if item.path.suffix == ".toml" and rows.lines else 1,
            f"column {unknown[0]} is not a column of {item.table}{did_you_mean(unknown[0], types)}",
            f"its columns: {', '.join(types)}",
        )  # fmt: skip
    texts = {c: pa.array([row[i] for row in rows.rows], pa.string()) for i, c in enumerate(rows.columns)}
    data = pa.table({LINE: pa.array(rows.lines, pa.int64()), **texts})
    with wh.registered("rh_fixture_rows", data):
        for column in rows.columns:
            whole = INTEGER.match(types[column])  # DuckDB would round '2.5' and read '1_000'
            rule = f"NOT regexp_full_match(\"{column}\", '\\s*[-+]?[0-9]+\\s*')" if whole else "false"
            bad = wh.sql(
                f'SELECT {LINE}, "{column}" FROM rh_fixture_rows WHERE "{column}" IS NOT NULL '
                f'AND (TRY_CAST("{column}" AS {types[column]}) IS NULL OR {rule}) ORDER BY {LINE} LIMIT 1'
            )
            if bad:
                raise InputError(item.path, bad[0][0], f"column {column}: {bad[0][1]!r} is not a {types[column]}")
        if create:
            given = {c: f'"{c}"' for c in rows.columns}
            values = ", ".join(f'CAST({given.get(c, "NULL")} AS {kind}) AS "{c}"' for c, kind in types.items())
            statement = f"CREATE TABLE {target} AS SELECT {values} FROM rh_fixture_rows ORDER BY {LINE}"
        else:
            named = ", ".join(f'"{c}"' for c in rows.columns)
            values = ", ".join(f'CAST("{c}" AS {types[c]})' for c in rows.columns)
            statement = f"INSERT INTO {target} ({named}) SELECT {values} FROM rh_fixture_rows ORDER BY {LINE}"
        try:
            wh.sql(statement)
        except duckdb.ConstraintException as exc:
            raise FileError(item.path, f"breaks a rule of {item.table}", str(exc).splitlines()[0]) from None


def canonical_csv(wh: Warehouse, table: str) -> str:
    """A table as the expected files hold it: a header of its columns, then its rows sorted (ORDER BY ALL),
    NULL as an empty field, a floating-point value to 12 significant digits (as Python's `{:.12g}`), any
    other value as Python prints it."""
    columns, rows = wh.columns(f"SELECT * FROM {table} ORDER BY ALL")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else f"{v:.12g}" if isinstance(v, float) else v for v in row])
    return out.getvalue()


def source_csv(wh: Warehouse, table: str) -> str:
    """A table as an input file holds it exactly: every value as DuckDB writes it as text (which reads back
    to the same value: doubles and floats in their shortest exact form), NULL as an empty field, rows in
    the table's order of all columns."""
    columns = list(_types(wh, table))
    texts = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in columns)
    rows = wh.sql(f"SELECT {texts} FROM (SELECT * FROM {table} ORDER BY ALL)")
    if any(value == "" for row in rows for value in row):
        raise RankhouseError(f"{table} holds an empty string, which a CSV input reads as NULL: give it in TOML")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([["" if v is None else v for v in row] for row in rows])
    return out.getvalue()


# -- comparing -------------------------------------------------------------------------------------
def differences(fixture: Fixture, model: str, expected: str, actual: str) -> list[str]:
    """How a model's output differs from its expected file, one line per difference (none if they are the
    same): different columns, or rows matched by the model's grain (rows missing, rows not expected,
    values changed), else the lines of a unified diff."""
    if expected == actual:
        return []
    want, got = list(csv.reader(io.StringIO(expected))), list(csv.reader(io.StringIO(actual)))
    if not want or not got or want[0] != got[0]:
        header = want[0] if want else []
        return [f"columns: expected {', '.join(header) or 'none'}; got {', '.join(got[0]) if got else 'none'}"]
    columns = got[0]
    grain = [c for c in fixture.project.models[model].grain if c in columns]
    keyed = _by_key(want[1:], columns, grain), _by_key(got[1:], columns, grain)
    if len(grain) != len(fixture.project.models[model].grain) or None in keyed:
        diff = difflib.unified_diff(expected.splitlines()[1:], actual.splitlines()[1:], "expected", "got", lineterm="")
        return list(diff)[2:]  # the lines after the file names
    wanted, found = keyed
    lines = []
    for key in list(wanted) + [k for k in found if k not in wanted]:
        shown = ", ".join(f"{c}={v}" for c, v in zip(grain, key))
        if key not in found:
            lines.append(f"missing row ({shown}): expected {_values(columns, grain, wanted[key])}")
        elif key not in wanted:
            lines.append(f"unexpected row ({shown}): {_values(columns, grain, found[key])}")
        elif wanted[key] != found[key]:
            changed = [f"{c} expected {a or 'NULL'}, got {b or 'NULL'}"
                       for c, a, b in zip(columns, wanted[key], found[key]) if a != b]  # fmt: skip
            lines.append(f"row ({shown}): " + "; ".join(changed))
    return lines


def _by_key(rows: list[list[str]], columns: list[str], grain: list[str]) -> dict[tuple, list[str]] | None:
    """Rows by their grain's values, or None if two share them (or a row is ragged)."""
    positions = [columns.index(c) for c in grain]
    keyed: dict[tuple, list[str]] = {}
    for row in rows:
        if len(row) != len(columns):
            return None
        key = tuple(row[p] for p in positions)
        if key in keyed:
            return None
        keyed[key] = row
    return keyed


def _values(columns: list[str], grain: list[str], row: list[str]) -> str:
    return ", ".join(f"{c}={v or 'NULL'}" for c, v in zip(columns, row) if c not in grain) or "(no other column)"


def check(fixtures: list[Fixture], update: bool = False) -> list[Outcome]:
    """Run every fixture, then compare each tested model's output with its expected file (with `update`,
    write the files that differ or are missing instead). A fixture whose models cannot be built fails
    each of its tests with the reason. Nothing is written until every fixture has run."""
    outputs: dict[Path, dict[str, str] | str] = {}
    for fixture in fixtures:
        try:
            outputs[fixture.folder] = run_fixture(fixture)
        except (ModelError, AuditError) as exc:
            outputs[fixture.folder] = str(exc)
    outcomes = []
    for fixture in fixtures:
        found = outputs[fixture.folder]
        for model in fixture.tested:
            if isinstance(found, str):
                outcomes.append(
                    Outcome(fixture.folder, model, "failed", f"the fixture's models are not built: {found}")
                )
                continue
            outcomes.append(_compare(fixture, model, found[model], update))
    return outcomes


def _compare(fixture: Fixture, model: str, actual: str, update: bool) -> Outcome:
    path = fixture.expected(model)
    expected = path.read_text(encoding="utf-8") if path.is_file() else None
    if expected == actual:
        return Outcome(fixture.folder, model, "passed")
    if update:
        path.write_text(actual, encoding="utf-8")
        return Outcome(fixture.folder, model, "written" if expected is None else "updated", str(path))
    if expected is None:
        return Outcome(fixture.folder, model, "failed", f"no expected file {path} (rankhouse test --update writes it)")
    lines = differences(fixture, model, expected, actual)
    more = len(lines) - MAX_DIFFERENCES
    shown = lines[:MAX_DIFFERENCES] + ([f"... and {more} more"] if more > 0 else [])
    detail = f"{path} differs from the model's output:\n" + "\n".join("  " + line for line in shown)
    return Outcome(fixture.folder, model, "failed", detail)
