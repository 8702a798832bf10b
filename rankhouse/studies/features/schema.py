"""The named-feature schema of seed 004 (E2-E5): a TOML file of fixed property questions.

    [schema]
    name = "banking77_features"
    description = "..."
    families = ["cards", "transfers", ...]

    [[feature]]
    name = "card_delivery"          # [a-z][a-z0-9_]*, unique
    family = "cards"                # one of [schema] families
    question = "Is the message about when or whether a card will arrive?"

Every value of a feature is in [0, 1]. The loader `features.schema` writes raw.feature_schema (schema:
the name it is loaded under, default the file name up to its first dot; schema_sha256: the file's
SHA-256, which keys every extraction; position: 1-based file order; feature, family, question), in
one transaction, recorded in meta.sources.

Rules, each reported with the file, the line and the rule, and nothing loaded: UTF-8 (a leading BOM
is stripped); valid TOML; a [schema] table with a non-empty string `name`, an optional string
`description` and a non-empty list `families` of distinct names; no other top-level key; at least one
[[feature]]; each feature has exactly `name`, `family` and `question`; a name matching
[a-z][a-z0-9_]* and not given twice; a family listed in `families`; a non-empty question.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pyarrow as pa

from rankhouse.errors import InputError
from rankhouse.loaders.lines import check_utf8, without_bom
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, replace_named_rows, sha256_bytes, writes_inputs
from rankhouse.warehouse import Warehouse

FEATURE_NAME = re.compile(r"[a-z][a-z0-9_]*")
FEATURE_KEYS = ("name", "family", "question")
SCHEMA_KEYS = ("name", "description", "families")


def _toml(path: str | Path, data: bytes) -> tuple[dict, list[str]]:
    """The parsed file and its lines (UTF-8, BOM stripped); a TOML error names its line."""
    check_utf8(path, data)
    text = without_bom(data).decode("utf-8")
    try:
        return tomllib.loads(text), text.split("\n")
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise InputError(path, int(line.group(1)) if line else 0, "not valid TOML", str(exc)) from None


def _header_lines(lines: list[str], header: str) -> list[int]:
    """1-based numbers of the lines that open a `[header]` or `[[header]]` table, in file order."""
    pattern = re.compile(rf"^\s*\[\[?\s*{re.escape(header)}\s*\]\]?")
    return [number for number, line in enumerate(lines, start=1) if pattern.match(line)]


def _text(path: str | Path, line: int, value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, line, f"{what} must be a non-empty string", repr(value)[:60])
    return value


def read_schema(path: str | Path, data: bytes) -> list[tuple[str, str, str]]:
    """(feature, family, question) of every [[feature]] of a schema file, in file order, checked."""
    spec, lines = _toml(path, data)
    extra = sorted(set(spec) - {"schema", "feature"})
    if extra:
        raise InputError(path, 1, f"unknown top-level key {extra[0]!r}", "expected [schema] and [[feature]] tables")
    schema = spec.get("schema")
    schema_line = (_header_lines(lines, "schema") or [1])[0]
    if not isinstance(schema, dict):
        raise InputError(path, 1, "no [schema] table")
    unknown = sorted(set(schema) - set(SCHEMA_KEYS))
    if unknown:
        raise InputError(path, schema_line, f"[schema] has an unknown key {unknown[0]!r}",
                         f"expected {', '.join(SCHEMA_KEYS)}")  # fmt: skip
    _text(path, schema_line, schema.get("name"), "[schema] name")
    if not isinstance(schema.get("description", ""), str):
        raise InputError(path, schema_line, "[schema] description must be a string")
    families = schema.get("families")
    if not isinstance(families, list) or not families:
        raise InputError(path, schema_line, "[schema] families must be a non-empty list of names", repr(families)[:60])
    for family in families:
        _text(path, schema_line, family, "a family")
    if len(set(families)) != len(families):
        raise InputError(path, schema_line, "a family is listed twice in [schema] families")
    features = spec.get("feature")
    if not isinstance(features, list) or not features:
        raise InputError(path, schema_line, "no [[feature]] in the file: a schema has at least one feature")
    starts = _header_lines(lines, "feature")
    rows, first = [], {}
    for i, entry in enumerate(features):
        line = starts[i] if i < len(starts) else 0
        missing = [key for key in FEATURE_KEYS if key not in entry]
        if missing:
            raise InputError(path, line, f"[[feature]] lacks {missing[0]}", f"expected {', '.join(FEATURE_KEYS)}")
        unknown = sorted(set(entry) - set(FEATURE_KEYS))
        if unknown:
            raise InputError(path, line, f"[[feature]] has an unknown key {unknown[0]!r}",
                             f"expected {', '.join(FEATURE_KEYS)}")  # fmt: skip
        name = entry["name"]
        if not isinstance(name, str) or not FEATURE_NAME.fullmatch(name):
            raise InputError(path, line, "a feature name matches [a-z][a-z0-9_]*", repr(name)[:60])
        if name in first:
            raise InputError(path, line, "feature name given twice", f"{name}, first at line {first[name]}")
        first[name] = line
        family = entry["family"]
        if family not in families:
            raise InputError(path, line, f"unknown family {family!r} of feature {name}",
                             f"[schema] families: {', '.join(map(str, families))}")  # fmt: skip
        rows.append((name, family, _text(path, line, entry["question"], f"the question of feature {name}")))
    return rows


@writes_inputs
def load_feature_schema(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A feature schema into raw.feature_schema under `name` (default: the file name up to its first
    dot).  Example: load_feature_schema(wh, "studies/banking77_features.schema.toml")"""
    data = read_file(path)
    sha = sha256_bytes(data)
    name = name or Path(path).name.split(".", 1)[0]
    previous = loaded_sha(wh, "meta.sources", "raw.feature_schema", name)
    if previous == sha:
        return LoadResult("raw.feature_schema", name, str(path), sha, 0, "unchanged")
    rows = read_schema(path, data)
    table = pa.table({
        "schema": [name] * len(rows), "schema_sha256": [sha] * len(rows),
        "position": pa.array(range(1, len(rows) + 1), pa.int32()),
        "feature": [r[0] for r in rows], "family": [r[1] for r in rows], "question": [r[2] for r in rows],
    })  # fmt: skip
    replace_named_rows(wh, "raw.feature_schema", "schema", name, table, "meta.sources", "raw.feature_schema", path,
                       sha, "features.schema")  # fmt: skip
    return LoadResult("raw.feature_schema", name, str(path), sha, len(rows), "replaced" if previous else "loaded")
