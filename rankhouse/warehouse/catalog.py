"""Model files: a short `-- key: value` header, then plain SQL (a jinja2 template).

    -- name: run_ranking
    -- version: 1
    -- stage: prepare
    -- grain: run_id, qid, rank
    -- audits: not_null(run_id, qid, docno); unique_grain; at_least_one_row
    -- parameters: depth = 0
    -- description: Each run's documents in trec_eval's order ...
    --   (an indented comment line continues the previous key)
    SELECT ...

Keys: name (must equal the file name), version, stage (prepare | evaluate), grain, audits, description
are required; parameters (TOML inline-table body: defaults of the jinja2 variables the SQL uses, each
default also declaring its parameter's type: `parameter_fits`), raw (parameters, separated by commas,
that render as they are; below), depends_on (tables the SQL parser cannot see), columns (TOML
inline-table body: definitions of the model's own columns, `listed = "..."`, set as column comments with
the glossary's; below), materialized (`table`, the default, or `view` for a large intermediate that its
readers consume once), aggregate (`hash`, the default, or `array` for a model whose GROUP BY is over one
dense integer key: the statements that compute it, its own build or, for a view, the builds of the
tables that read it, sum into a directly indexed array; Warehouse.array_aggregates), row_order (`kept`,
the default, or `any` for a table whose rows may be stored in any order: its build lets DuckDB drop the
SELECT's order, so that the parts of a UNION ALL are computed side by side), functions (the
Python SQL functions the SQL calls, from the registry rankhouse/functions.py, registered just before the
model is built), dialect (`duckdb: <reason>` for a model that needs DuckDB-only features and is
exempt from the Spark portability check), parity (`within(<column> <amount>, ...): <reason>` for a portable
model whose listed columns may differ between engines by at most the absolute amount each gives, where
the engine parity tests' 1e-12 relative cannot hold: a difference of two doubles equal to 1e-12, whole
units taken of doubles), holds (`labels` for an evaluate model whose rows are labels, or carry a label
per document: judgments, judged rankings; such a model stays in the study's labels file and is never
copied to results.*; a model that reads gate.* itself holds labels without saying so) and companion
(`true` for a prepare view for analysts, e.g. a
ranking keyed by qid and docno: a study builds it after its prepare models when it reads only those, and
never freezes it; no model reads it) are optional.

The template renders in jinja2's sandbox (rankhouse/warehouse/render.py). A parameter renders as a SQL
literal of its declared type: `{{ corpus }}` (as `{{ corpus | literal }}`) is the quoted string
`'banking77'` whatever the value given, outside any quotes or comment of the SQL, and the template
cannot make other text of a string parameter (`| identifier` checks that it is a name and renders it as
it is). A parameter listed in `raw` (a string or a list of strings) renders as it is, each of its values
checked to be a plain name (letters, digits and _, not starting with a digit), e.g. a model to read:

    -- parameters: source = "run_ranking"
    -- raw: source
    SELECT * FROM models.{{ source }}

Comments. When a model is built, its table or view gets its description as comment and each of its
columns the definition of its name (COMMENT ON; rankhouse/warehouse/comments.py): from the glossary
models/columns.toml, one definition per name shared by many models, or from the header's `columns` for
a name of its own. A header may not define a name the glossary defines. Comments are no part of a
fingerprint (the header is not), so a changed definition shows once the model is next built.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rankhouse.errors import ModelError

STAGES = ("prepare", "evaluate")
REQUIRED = ("name", "version", "stage", "grain", "audits", "description")
OPTIONAL = ("parameters", "raw", "depends_on", "materialized", "aggregate", "functions", "dialect", "columns")
OPTIONAL += ("companion", "parity", "holds", "row_order")
GLOSSARY = "columns.toml"
MATERIALIZATIONS = ("table", "view")
AGGREGATES = ("hash", "array")
ROW_ORDERS = ("kept", "any")
HEADER_LINE = re.compile(r"^--\s?(\w+):\s*(.*)$")
CONTINUATION = re.compile(r"^--\s{2,}(\S.*)$")
AUDIT = re.compile(r"^(\w+)(?:\((.*)\))?$")
_TOLERANCE = r"\w+\s+\d+(?:\.\d*)?(?:e[-+]?\d+)?"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # a plain name: a model, a column, a raw parameter
PARITY = re.compile(rf"^within\(\s*({_TOLERANCE}(?:\s*,\s*{_TOLERANCE})*)\s*\):\s*\S", re.IGNORECASE)


@dataclass(frozen=True)
class Audit:
    """A blocking check on a model's output: not_null, unique_grain, accepted_range or at_least_one_row."""

    kind: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.kind}({', '.join(self.args)})" if self.args else self.kind


AUDIT_ARITY = {"not_null": None, "unique_grain": 0, "accepted_range": 3, "at_least_one_row": 0}


@dataclass(frozen=True)
class Model:
    """One model file: its header and its SQL template."""

    name: str
    path: Path
    group: str
    version: int
    stage: str
    grain: tuple[str, ...]
    audits: tuple[Audit, ...]
    description: str
    template: str
    parameters: dict = field(default_factory=dict)
    raw: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    materialized: str = "table"
    aggregate: str = "hash"
    row_order: str = "kept"
    functions: tuple[str, ...] = ()
    dialect: str | None = None
    columns: dict[str, str] = field(default_factory=dict)
    companion: bool = False
    holds: str | None = None  # "labels": its rows hold labels (a judgment, a label per document)
    parity: str | None = None
    glossary: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def tolerances(self) -> dict[str, float]:
        """The columns the header's `parity` lets differ across engines, each by at most the absolute
        amount it gives (usually none).

        Example: Project.load().models["paired_differences"].tolerances gives
        {'difference': 1e-12, 'units': 100000.0}.
        """
        found = PARITY.match(self.parity or "")
        pairs = (item.split() for item in found.group(1).split(",")) if found else ()
        return {column: float(amount) for column, amount in pairs}

    @property
    def table(self) -> str:
        """The table (or view) the model builds: `models.<name>`."""
        return f"models.{self.name}"

    def column_comment(self, column: str) -> str | None:
        """The definition of one of its columns: the header's, else the glossary's, else None."""
        return self.columns.get(column) or self.glossary.get(column)


def parameter_kind(default: object, plural: bool = False) -> str:
    """The type a parameter's default declares, in words.

    >>> parameter_kind(0), parameter_kind(0.5), parameter_kind(["AP"]), parameter_kind([])
    ('a whole number', 'a finite number', 'a list of strings', 'a list')
    """
    if isinstance(default, list) and default:
        return ("lists of " if plural else "a list of ") + parameter_kind(default[0], plural=True)
    kinds = {bool: "true or false", int: "a whole number", float: "a finite number", str: "a string", list: "a list"}
    kind = kinds.get(type(default), "a table" if isinstance(default, dict) else type(default).__name__)
    if plural:
        return {"true or false": "true or false values"}.get(kind, kind.removeprefix("a ") + "s")
    return kind


def parameter_fits(value: object, default: object) -> bool:
    """Whether `value` is of the type `default` declares: a string, a whole number (not true or false),
    a finite number (a whole number will do), true or false, a list (of the default's element type when
    the default list has elements) or a table of parameter values.

    >>> parameter_fits(2, 1.0), parameter_fits(True, 1), parameter_fits(["a"], ["AP"]), parameter_fits([1], ["AP"])
    (True, False, True, False)
    """
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and math.isfinite(value)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, list):
        if not isinstance(value, (list, tuple)):
            return False
        return all(parameter_fits(v, default[0]) if default else is_parameter_value(v) for v in value)
    if isinstance(default, dict):
        return isinstance(value, dict) and all(isinstance(k, str) and is_parameter_value(v) for k, v in value.items())
    return False


def effective_parameters(model: Model, params: dict | None) -> dict:
    """The model's declared parameters: header defaults, overridden by `params` where given, each
    checked to be of the type its default declares (and a raw parameter's values to be plain names)."""
    given = params or {}
    values = {}
    for key, default in model.parameters.items():
        value = given.get(key, default)
        if not parameter_fits(value, default):
            raise ModelError(
                model.name,
                f"parameter {key} is declared {parameter_kind(default)} (default {default!r}), given {value!r}",
            )
        if key in model.raw:
            for text in value if isinstance(value, (list, tuple)) else [value]:
                if not isinstance(text, str) or not IDENTIFIER.match(text):
                    raise ModelError(
                        model.name,
                        f"parameter {key} is declared raw and must be a plain name (letters, digits and _, not "
                        f"starting with a digit), not {text!r}",
                    )
        values[key] = value
    return values


def declared_parameters(models: Iterable[Model]) -> dict[str, dict[str, object]]:
    """Every parameter the models declare: its name -> {model: its default}, in the models' order."""
    declared: dict[str, dict[str, object]] = {}
    for model in models:
        for key, default in model.parameters.items():
            declared.setdefault(key, {})[model.name] = default
    return declared


def is_parameter_value(value: object) -> bool:
    """A string, a whole or finite number, true or false, or a list or table of them."""
    if isinstance(value, (list, tuple)):
        return all(is_parameter_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_parameter_value(v) for k, v in value.items())
    return isinstance(value, (str, int)) or (isinstance(value, float) and math.isfinite(value))


def parse_raw(model: str, text: str, parameters: dict) -> tuple[str, ...]:
    """`source, columns` -> ('source', 'columns'): parameters that are strings or lists of strings."""
    raw = tuple(p.strip() for p in text.split(",") if p.strip())
    for name in raw:
        if name not in parameters:
            raise ModelError(model, f"raw: {name} is not one of its parameters ({', '.join(parameters) or 'none'})")
        default = parameters[name]
        if not (isinstance(default, str) or (isinstance(default, list) and all(isinstance(v, str) for v in default))):
            raise ModelError(
                model,
                f"raw: parameter {name} is {default!r}; only a string or a list of strings can be raw "
                "(it renders as it is, each value checked to be a plain name)",
            )
    return raw


def parse_header(text: str, path: Path) -> tuple[dict[str, str], str]:
    """Split a model file into its header (key -> raw value) and its SQL body."""
    lines = text.splitlines()
    header: dict[str, str] = {}
    key = None
    body_start = len(lines)
    for i, line in enumerate(lines):
        continued = CONTINUATION.match(line)
        keyed = HEADER_LINE.match(line)
        if continued and key is not None:
            header[key] += " " + continued.group(1).strip()
        elif keyed:
            key = keyed.group(1)
            if key in header:
                raise ModelError(path.stem, f"header key {key!r} given twice ({path})")
            header[key] = keyed.group(2).strip()
        else:
            body_start = i
            break
    return header, "\n".join(lines[body_start:]).strip() + "\n"


def parse_audits(model: str, text: str) -> tuple[Audit, ...]:
    """`not_null(a, b); unique_grain` -> (Audit('not_null', ('a', 'b')), Audit('unique_grain'))."""
    audits = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        match = AUDIT.match(item)
        if not match or match.group(1) not in AUDIT_ARITY:
            raise ModelError(model, f"unknown audit {item!r}; known: {', '.join(AUDIT_ARITY)}")
        kind = match.group(1)
        args = tuple(a.strip() for a in match.group(2).split(",")) if match.group(2) else ()
        arity = AUDIT_ARITY[kind]
        if (arity is None and not args) or (arity is not None and len(args) != arity):
            raise ModelError(model, f"audit {item!r} has the wrong number of arguments")
        audits.append(Audit(kind, args))
    return tuple(audits)


def load_glossary(models_dir: Path | Sequence[Path]) -> dict[str, str]:
    """The column glossary `columns.toml` of a models folder (name -> definition), or of several (rankhouse's
    and a project's: a name defined in two is an error naming both files); empty if there is none.

    >>> from rankhouse.paths import MODELS_DIR
    >>> load_glossary(MODELS_DIR)["qid"]
    "The query's own id, as in its source file (a TREC topic number, a dataset's query id)"
    """
    glossary: dict[str, str] = {}
    where: dict[str, Path] = {}
    for root in roots_of(models_dir):
        path = root / GLOSSARY
        if not path.is_file():
            continue
        try:
            own = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ModelError(GLOSSARY, f"{path} is not valid TOML: {exc}") from None
        bad = [name for name, text in own.items() if not isinstance(text, str) or not text.strip()]
        if bad:
            raise ModelError(GLOSSARY, f'{path} defines {", ".join(bad)} with no text: each name = "its definition"')
        twice = sorted(set(own) & set(glossary))
        if twice:
            raise ModelError(GLOSSARY, f"{twice[0]} is defined twice: in {where[twice[0]]} and in {path}")
        glossary.update(own)
        where.update(dict.fromkeys(own, path))
    return glossary


def parse_columns(model: str, text: str, glossary: dict[str, str]) -> dict[str, str]:
    """`listed = "..."` -> {'listed': '...'}: a model's own column definitions, none of a glossary name."""
    try:
        columns = tomllib.loads(f"c = {{{text}}}")["c"]
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(model, f"bad columns in the header: {exc}") from None
    for name, definition in columns.items():
        if not isinstance(definition, str) or not definition.strip():
            raise ModelError(model, f"columns: {name} needs a definition (a string)")
        if name in glossary:
            raise ModelError(model, f"columns: {name} is defined in models/{GLOSSARY}, once for every model")
    return columns


def parse_model(path: Path, models_dir: Path, glossary: dict[str, str] | None = None) -> Model:
    """Read one model file (its column definitions checked against the glossary, if given)."""
    header, body = parse_header(path.read_text(encoding="utf-8"), path)
    name = header.get("name", path.stem)
    missing = [k for k in REQUIRED if k not in header]
    if missing:
        raise ModelError(name, f"header lacks {', '.join(missing)} ({path})")
    unknown = sorted(set(header) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise ModelError(name, f"unknown header keys {', '.join(unknown)} ({path})")
    if name != path.stem:
        raise ModelError(name, f"header name must equal the file name {path.name}")
    if header.get("materialized", "table") not in MATERIALIZATIONS:
        raise ModelError(name, f"materialized must be one of {', '.join(MATERIALIZATIONS)}")
    if header.get("aggregate", "hash") not in AGGREGATES:
        raise ModelError(name, f"aggregate must be one of {', '.join(AGGREGATES)}")
    if header.get("row_order", "kept") not in ROW_ORDERS:
        raise ModelError(name, f"row_order must be one of {', '.join(ROW_ORDERS)}")
    if header.get("companion", "false") not in ("true", "false"):
        raise ModelError(name, "companion is true or false")
    if header.get("companion") == "true" and (header.get("materialized") != "view" or header["stage"] != "prepare"):
        raise ModelError(name, "a companion is a view of the prepare stage (materialized: view, stage: prepare)")
    if header.get("holds", "labels") != "labels" or (header.get("holds") and header["stage"] != "evaluate"):
        raise ModelError(name, "holds is `labels`, for an evaluate model whose rows hold labels")
    if "parity" in header and not PARITY.match(header["parity"]):
        raise ModelError(name, f"parity is `within(<column> <amount>, ...): <reason>`, not {header['parity']!r}")
    if header["stage"] not in STAGES:
        raise ModelError(name, f"stage must be one of {', '.join(STAGES)}, not {header['stage']!r}")
    try:
        version = int(header["version"])
        parameters = tomllib.loads(f"p = {{{header.get('parameters', '')}}}")["p"]
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ModelError(name, f"bad version or parameters in the header: {exc}") from None
    for key, default in parameters.items():
        if not parameter_fits(default, default):
            raise ModelError(
                name,
                f"declares parameter {key} = {default!r}, which is not a parameter value (a string, a whole or "
                "finite number, true or false, or a list of them, a list's elements all of one type)",
            )
    return Model(
        name=name,
        path=path,
        group=path.parent.relative_to(root_of(path, models_dir)).as_posix(),
        version=version,
        stage=header["stage"],
        grain=tuple(c.strip() for c in header["grain"].split(",") if c.strip()),
        audits=parse_audits(name, header["audits"]),
        description=header["description"],
        template=body,
        parameters=parameters,
        raw=parse_raw(name, header.get("raw", ""), parameters),
        depends_on=tuple(t.strip() for t in header.get("depends_on", "").split(",") if t.strip()),
        materialized=header.get("materialized", "table"),
        aggregate=header.get("aggregate", "hash"),
        row_order=header.get("row_order", "kept"),
        functions=tuple(f.strip() for f in header.get("functions", "").split(",") if f.strip()),
        dialect=header.get("dialect") or None,
        columns=parse_columns(name, header.get("columns", ""), glossary or {}),
        companion=header.get("companion") == "true",
        holds=header.get("holds"),
        parity=header.get("parity"),
        glossary=glossary or {},
    )


def roots_of(models_dir: Path | Sequence[Path]) -> tuple[Path, ...]:
    """One models folder or several (rankhouse's own and a project's: rankhouse/project.py), as a tuple."""
    return (Path(models_dir),) if isinstance(models_dir, (str, Path)) else tuple(Path(r) for r in models_dir)


def root_of(path: Path, models_dir: Path | Sequence[Path]) -> Path:
    """The models folder that holds a model file (its group is the path below it)."""
    return next(root for root in roots_of(models_dir) if path.is_relative_to(root))


def model_paths(models_dir: Path | Sequence[Path]) -> dict[str, Path]:
    """Every `*.sql` model file under the models folder(s), by model name (its file name, which its header
    must repeat); names must be unique across groups and folders: a project's model may not take the
    name of one of rankhouse's."""
    paths: dict[str, Path] = {}
    for root in roots_of(models_dir):
        for path in sorted(root.rglob("*.sql")):
            if path.stem in paths:
                raise ModelError(path.stem, f"defined twice: {paths[path.stem]} and {path}")
            paths[path.stem] = path
    return paths


def load_models(models_dir: Path | Sequence[Path], names: Iterable[str] | None = None) -> dict[str, Model]:
    """Every `*.sql` model under the models folder(s) (or only those of `names` that exist), by name."""
    glossary = load_glossary(models_dir)
    paths = model_paths(models_dir)
    chosen = paths if names is None else {name: paths[name] for name in names if name in paths}
    return {name: parse_model(path, root_of(path, models_dir), glossary) for name, path in chosen.items()}
