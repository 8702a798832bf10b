"""Seed 004's E3 semantic groups and E4 controllability cases, each a loader (rankhouse/loaders/__init__.py),
label-free, one transaction per file, errors naming the file, the line and the rule:

features.groups        studies/banking77_groups.toml: `[[group]]` tables with `id`, `intents` (the training
                       intents the group's proxy relevance maps to) and exactly four `paraphrases` (the E3
                       queries; `name`, `narrative` and `[[group.subnarrative]]` are the lanes study's and
                       are not loaded here). Into raw.group_paraphrases (group_row: the group's 0-based file
                       position; paraphrase 1-4; item `<id>.<paraphrase>`) and raw.group_intents.
features.requirements  the requirements file (studies/banking77_requirements.toml): one `[[group]]` per group
                       of the groups file with its manual explicit requirement, `weights = {feature = w}`,
                       and `[[case]]` tables (E4) with `id`, `name`, `positive = {feature = w}`,
                       `unwanted_feature`, `desired_intents` and `unwanted_intents`. Into raw.group_weights,
                       raw.control_cases (case_row: 0-based file position), raw.case_weights and
                       raw.case_intents (role 'desired' or 'unwanted'). The groups of the corpus must be
                       loaded first (features.groups under the same name).

Rules. Both: UTF-8 TOML (a BOM is stripped); only the tables named above, and in each table only its
keys; ids are non-empty and without whitespace, none twice. Groups: at least one group; exactly four
non-empty paraphrases; a non-empty list of intents, none twice in a group and none in two groups.
Requirements: every group of the groups file has weights and no other group does; weights are a
non-empty table of feature names to numbers in (0, 1]; every case has every key; a non-empty name and
unwanted feature; non-empty lists of desired and unwanted intents, none twice, none both desired and
unwanted, each an intent of some group; at least six cases (seed 004). Feature names are checked against
the schema (another input) by a model's audit (models/features/requirement_features.sql).
"""

from __future__ import annotations

import re
import tomllib
from contextlib import ExitStack
from pathlib import Path

import pyarrow as pa

from rankhouse.errors import InputError
from rankhouse.loaders.lines import check_utf8, identifier, without_bom
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, record_source, sha256_bytes, writes_inputs
from rankhouse.warehouse import Warehouse

PARAPHRASES = 4  # per group (seed 004: 25 groups x 4 paraphrases)
MIN_CASES = 6  # seed 004 E4: at least six cases
GROUP_KEYS = ("id", "name", "narrative", "intents", "paraphrases", "subnarrative")
WEIGHT_KEYS = ("id", "weights")
CASE_KEYS = ("id", "name", "positive", "unwanted_feature", "desired_intents", "unwanted_intents")


def toml_tables(path: str | Path, data: bytes, keys: tuple[str, ...]) -> dict[str, list[tuple[int, dict]]]:
    """The arrays of tables `[[key]]` of a TOML file, each table with the line of its header; a key
    other than `keys` at the top level is refused."""
    check_utf8(path, data)
    text = without_bom(data).decode("utf-8")
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise InputError(path, int(line.group(1)) if line else 0, "not valid TOML", str(exc)) from None
    for key, value in spec.items():
        if key not in keys or not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            expected = " and ".join(f"[[{k}]]" for k in keys)
            raise InputError(path, _line_of(text, key), f"unexpected top-level {key!r}", f"expected {expected} tables")
    found = {}
    for key in keys:
        header = re.compile(rf"^\s*\[\[\s*{key}\s*\]\]")
        lines = [n for n, line in enumerate(text.split("\n"), start=1) if header.match(line)]
        found[key] = [(lines[i] if i < len(lines) else 0, table) for i, table in enumerate(spec.get(key, []))]
    return found


def _line_of(text: str, key: str) -> int:
    """The first line that starts with `key` (as a key or a table header), else 1."""
    pattern = re.compile(rf"^\s*\[*\s*{re.escape(key)}\b")
    return next((n for n, line in enumerate(text.split("\n"), start=1) if pattern.match(line)), 1)


def _keys(path: str | Path, line: int, table: dict, allowed: tuple[str, ...], required: tuple[str, ...],
          what: str) -> None:  # fmt: skip
    extra = sorted(set(table) - set(allowed))
    if extra:
        raise InputError(path, line, f"unknown key {extra[0]!r} in a [[{what}]]", f"known: {', '.join(allowed)}")
    missing = [k for k in required if k not in table]
    if missing:
        raise InputError(path, line, f"[[{what}]] lacks {missing[0]}")


def _text(path: str | Path, line: int, value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, line, f"{what} is not a non-empty string", repr(value)[:60])
    return value


def _names(path: str | Path, line: int, value: object, what: str) -> list[str]:
    """A non-empty list of names (intents), none twice."""
    if not isinstance(value, list) or not value:
        raise InputError(path, line, f"{what} must be a non-empty list of names", repr(value)[:60])
    names = [identifier(path, line, v, what[:-1] if what.endswith("s") else what) for v in value]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(path, line, f"{what} names an intent twice", repeated[0])
    return names


def _weights(path: str | Path, line: int, value: object, what: str) -> dict[str, float]:
    """A non-empty table of feature names to weights in (0, 1]."""
    if not isinstance(value, dict) or not value:
        raise InputError(path, line, f"{what} must be a non-empty table of feature = weight", repr(value)[:60])
    for feature, weight in value.items():
        identifier(path, line, feature, "feature name")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight <= 1:
            raise InputError(path, line, f"{what}: a weight must be a number in (0, 1]", f"{feature} = {weight!r}")
    return {feature: float(weight) for feature, weight in value.items()}


def _unique_ids(path: str | Path, tables: list[tuple[int, dict]], what: str) -> list[str]:
    ids, first = [], {}
    for line, table in tables:
        table_id = identifier(path, line, table["id"], f"{what} id")
        if table_id in first:
            raise InputError(path, line, f"{what} id given twice", f"{table_id}, first at line {first[table_id]}")
        first[table_id] = line
        ids.append(table_id)
    return ids


# -- the groups file ---------------------------------------------------------------------------------
def read_groups(path: str | Path, data: bytes) -> list[tuple[str, list[str], list[str]]]:
    """(id, intents, paraphrases) of every group, in file order, checked."""
    groups = toml_tables(path, data, ("group",))["group"]
    if not groups:
        raise InputError(path, 1, "no [[group]] tables in the file")
    for line, table in groups:
        _keys(path, line, table, GROUP_KEYS, ("id", "intents", "paraphrases"), "group")
    ids = _unique_ids(path, groups, "group")
    owner: dict[str, tuple[str, int]] = {}
    found = []
    for group_id, (line, table) in zip(ids, groups):
        paraphrases = table["paraphrases"]
        if not isinstance(paraphrases, list) or len(paraphrases) != PARAPHRASES:
            shown = len(paraphrases) if isinstance(paraphrases, list) else repr(paraphrases)[:40]
            raise InputError(path, line, f"a group has exactly {PARAPHRASES} paraphrases", f"{group_id}: {shown}")
        texts = [_text(path, line, p, "a paraphrase") for p in paraphrases]
        intents = _names(path, line, table["intents"], "intents")
        for intent in intents:
            if intent in owner:
                other, other_line = owner[intent]
                raise InputError(path, line, "an intent is in at most one group",
                                 f"{intent} is in {other} (line {other_line}) and {group_id}")  # fmt: skip
            owner[intent] = (group_id, line)
        found.append((group_id, intents, texts))
    return found


@writes_inputs
def load_groups(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """E3's groups (paraphrases and intent names) into raw.group_paraphrases and raw.group_intents under
    corpus `name` (default: the file name without extension).
    Example: load_groups(wh, "studies/banking77_groups.toml", "banking77")"""
    data = read_file(path)
    sha, corpus = sha256_bytes(data), name or Path(path).stem
    previous = loaded_sha(wh, "meta.sources", "raw.group_paraphrases", corpus)
    if previous == sha:
        return LoadResult("raw.group_paraphrases", corpus, str(path), sha, 0, "unchanged")
    groups = read_groups(path, data)
    paraphrases = [(g, row, n, f"{g}.{n}", text) for row, (g, _, texts) in enumerate(groups)
                   for n, text in enumerate(texts, start=1)]  # fmt: skip
    intents = [(g, intent) for g, names, _ in groups for intent in names]
    tables = {
        "raw.group_paraphrases": _arrow(corpus, paraphrases, ("group_id", "group_row", "paraphrase", "item", "text")),
        "raw.group_intents": _arrow(corpus, intents, ("group_id", "intent")),
    }
    _replace(wh, corpus, path, sha, tables, "features.groups")
    return LoadResult("raw.group_paraphrases", corpus, str(path), sha, len(paraphrases),
                      "replaced" if previous else "loaded")  # fmt: skip


# -- the requirements file ---------------------------------------------------------------------------
def read_requirements(path: str | Path, data: bytes, groups: list[str], intents: set[str]) -> dict[str, list]:
    """The rows of each requirements table (corpus left out), checked against the corpus's groups (ids in
    file order) and their intents."""
    tables = toml_tables(path, data, ("group", "case"))
    weighted, cases = tables["group"], tables["case"]
    for line, table in weighted:
        _keys(path, line, table, WEIGHT_KEYS, WEIGHT_KEYS, "group")
    rows: dict[str, list] = {"raw.group_weights": [], "raw.control_cases": [], "raw.case_weights": [],
                             "raw.case_intents": []}  # fmt: skip
    for group_id, (line, table) in zip(_unique_ids(path, weighted, "group"), weighted):
        if group_id not in groups:
            raise InputError(path, line, "a [[group]] that the groups file does not have", group_id)
        for feature, weight in _weights(path, line, table["weights"], f"group {group_id} weights").items():
            rows["raw.group_weights"].append((group_id, feature, weight))
    missing = [g for g in groups if g not in {row[0] for row in rows["raw.group_weights"]}]
    if missing:
        last = weighted[-1][0] if weighted else 1
        raise InputError(path, last, "every group of the groups file has [[group]] weights",
                         f"{len(missing)} without: {', '.join(missing[:5])}")  # fmt: skip
    for line, table in cases:
        _keys(path, line, table, CASE_KEYS, CASE_KEYS, "case")
    for case_row, (case_id, (line, table)) in enumerate(zip(_unique_ids(path, cases, "case"), cases)):
        name = _text(path, line, table["name"], "a case's name")
        unwanted_feature = identifier(path, line, table["unwanted_feature"], "unwanted_feature")
        rows["raw.control_cases"].append((case_id, case_row, name, unwanted_feature))
        for feature, weight in _weights(path, line, table["positive"], f"case {case_id} positive").items():
            rows["raw.case_weights"].append((case_id, feature, weight))
        desired = _names(path, line, table["desired_intents"], "desired_intents")
        unwanted = _names(path, line, table["unwanted_intents"], "unwanted_intents")
        both = sorted(set(desired) & set(unwanted))
        if both:
            raise InputError(path, line, "an intent is both desired and unwanted", both[0])
        unknown = [i for i in desired + unwanted if i not in intents]
        if unknown:
            raise InputError(path, line, "an intent that no group of the groups file names", unknown[0])
        rows["raw.case_intents"] += [(case_id, i, "desired") for i in desired] + [
            (case_id, i, "unwanted") for i in unwanted
        ]
    if len(cases) < MIN_CASES:
        raise InputError(path, cases[-1][0] if cases else 1, f"at least {MIN_CASES} [[case]] tables (seed 004 E4)",
                         f"found {len(cases)}")  # fmt: skip
    return rows


REQUIREMENT_COLUMNS = {
    "raw.group_weights": ("group_id", "feature", "weight"),
    "raw.control_cases": ("case_id", "case_row", "name", "unwanted_feature"),
    "raw.case_weights": ("case_id", "feature", "weight"),
    "raw.case_intents": ("case_id", "intent", "role"),
}


@writes_inputs
def load_requirements(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """E3's manual requirements and E4's cases into raw.group_weights, raw.control_cases, raw.case_weights
    and raw.case_intents under corpus `name` (default: the file name without extension), whose groups
    must be loaded.  Example: load_requirements(wh, "studies/banking77_requirements.toml", "banking77")"""
    data = read_file(path)
    sha, corpus = sha256_bytes(data), name or Path(path).stem
    previous = loaded_sha(wh, "meta.sources", "raw.group_weights", corpus)
    if previous == sha:
        return LoadResult("raw.group_weights", corpus, str(path), sha, 0, "unchanged")
    in_order = "SELECT group_id FROM raw.group_paraphrases WHERE corpus = ? GROUP BY group_id ORDER BY min(group_row)"
    groups = [r[0] for r in wh.sql(in_order, [corpus])]
    if not groups:
        raise InputError(path, 0, f"corpus {corpus!r} has no groups", "load its groups file (features.groups) first")
    intents = {r[0] for r in wh.sql("SELECT intent FROM raw.group_intents WHERE corpus = ?", [corpus])}
    rows = read_requirements(path, data, groups, intents)
    tables = {table: _arrow(corpus, rows[table], columns) for table, columns in REQUIREMENT_COLUMNS.items()}
    _replace(wh, corpus, path, sha, tables, "features.requirements")
    return LoadResult("raw.group_weights", corpus, str(path), sha, sum(map(len, rows.values())),
                      "replaced" if previous else "loaded")  # fmt: skip


# -- writing -----------------------------------------------------------------------------------------
def _arrow(corpus: str, rows: list[tuple], columns: tuple[str, ...]) -> pa.Table:
    return pa.table({"corpus": [corpus] * len(rows), **{c: [r[i] for r in rows] for i, c in enumerate(columns)}})


def _replace(wh: Warehouse, corpus: str, path: str | Path, sha: str, tables: dict[str, pa.Table], loader: str) -> None:
    """One transaction: the corpus's rows of every table replaced by `tables`, each source recorded."""
    names = {table: f"rh_features_{i}" for i, table in enumerate(tables)}
    with ExitStack() as registered:
        for table, arrow in tables.items():
            registered.enter_context(wh.registered(names[table], arrow))
        with wh.transaction():
            for table, arrow in tables.items():
                wh.sql(f"DELETE FROM {table} WHERE corpus = ?", [corpus])
                wh.sql(f"INSERT INTO {table} BY NAME SELECT * FROM {names[table]}")
                record_source(wh, "meta.sources", table, corpus, path, sha, arrow.num_rows, loader)
