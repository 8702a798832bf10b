"""Evidence bundles (seed 000): tasks with requirements, documents, judged pools, two judges' grades.

A bundle is a directory of files, each loaded by its own loader under the bundle's name (default: the
directory's name), so that a protocol lists every file with its SHA-256 (docs/evidence_bundle.md):

tasks.jsonl      evidence.tasks      {"task_id", "question", "requirements": [str, ...], "split"}
documents.jsonl  evidence.documents  {"doc_id", "text"}
pool-key.json    evidence.pool       {"<task_id>": ["<doc_id>", ...], ...}      needs tasks, documents
judgments.jsonl  evidence.judgments  {"task_id", "doc_id", "judge", "grade", "obligations": [int, ...]}
                                     labels: into the labels file             needs tasks, documents, pool
vectors.parquet  evidence.vectors    columns doc_id, vector (384 floats)       needs documents
question_vectors.parquet  evidence.question_vectors  columns task_id, vector     needs tasks; loaded under
                 the name `<bundle>:questions` (the facet vectors' rows of that name are the questions)

Comparator runs (`dense`, `typed`) are TREC runs (qid = task_id, docno = doc_id): loader trec.run.

Rules, each reported with the file, the line (for Parquet: the 1-based row; 0: the file as a whole) and
the rule, and nothing loaded: UTF-8 (a leading BOM is stripped); one JSON object per non-blank line
with exactly the format's keys and no key twice; ids are non-empty strings without whitespace (they go
into TREC files); no task or document twice; a non-empty question and text; a non-empty list of
non-empty requirements; split `development` or `final`. The pool key is one JSON object: each key a
loaded task, given once, with a non-empty list of loaded documents, none twice; every task has a pool.
A judgment names a pair of the pool, judge `A` or `B`, an integer grade 0..3, and obligations that are
distinct 0-based indices into the task's requirements; a judge judges a pair once. Vectors: one per
loaded document and no other, 384 finite numbers of Euclidean norm 1 (within 1e-4); question vectors the
same, one per loaded task.

Loading the same bytes under the same name again is a no-op. Loading new bytes replaces the bundle's
rows of that file; replacing the tasks or documents also clears what was checked against them (the
pool; for documents, the vectors too), which must then be loaded again. Judgments live in the labels
file and are checked against the loaded tasks and pool on every load, unchanged bytes included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rankhouse.errors import InputError
from rankhouse.loaders.lines import check_utf8, without_bom
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, record_source, sha256_bytes, writes_inputs
from rankhouse.warehouse import Warehouse

SPLITS = ("development", "final")
JUDGES = ("A", "B")
GRADES = range(0, 4)
DIMENSION = 384
NORM_TOLERANCE = 1e-4

TASK_KEYS = ("task_id", "question", "requirements", "split")
DOCUMENT_KEYS = ("doc_id", "text")
JUDGMENT_KEYS = ("task_id", "doc_id", "judge", "grade", "obligations")
VECTOR_COLUMNS = ["doc_id", "vector"]
QUESTIONS = ":questions"  # the name suffix of a bundle's own question vectors (raw.evidence_facet_vectors rows)

TASKS = "raw.evidence_tasks"  # meta.sources key of tasks.jsonl (its requirements go with it)
DOCUMENTS = "raw.evidence_documents"
POOLS = "raw.evidence_pools"
VECTORS = "raw.evidence_vectors"
FACET_VECTORS = "raw.evidence_facet_vectors"
JUDGMENTS = "evidence_judgments"  # in the labels file, with evidence_obligations

NEEDS = {  # meta.sources key of a file that others are checked against -> (the file, its loader)
    TASKS: ("tasks.jsonl", "evidence.tasks"),
    DOCUMENTS: ("documents.jsonl", "evidence.documents"),
    POOLS: ("pool-key.json", "evidence.pool"),
}
DEPENDENTS = {TASKS: (POOLS,), DOCUMENTS: (POOLS, VECTORS)}  # cleared when these are replaced (question vectors
# load under another name, `<bundle>:questions`, and are checked against the tasks when they are loaded)

WHITESPACE = re.compile(r"[ \t\n\r]*")
ANY_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Task:
    """One line of tasks.jsonl."""

    line: int
    task_id: str
    question: str
    requirements: tuple[str, ...]
    split: str


@dataclass(frozen=True)
class Document:
    """One line of documents.jsonl."""

    line: int
    doc_id: str
    text: str


@dataclass(frozen=True)
class PoolMember:
    """One doc_id of a task's list in pool-key.json, at its 0-based position in the list."""

    line: int
    task_id: str
    doc_id: str
    position: int


@dataclass(frozen=True)
class Judgment:
    """One line of judgments.jsonl."""

    line: int
    task_id: str
    doc_id: str
    judge: str
    grade: int
    obligations: tuple[int, ...]


# -- JSON lines -------------------------------------------------------------------------------------
def _text(path: str | Path, data: bytes) -> str:
    """The file's text (without a leading BOM), or an InputError for a line that is not UTF-8 or a file
    with nothing in it."""
    check_utf8(path, data)
    data = without_bom(data)
    if not data.strip():
        raise InputError(path, 1, "empty file")
    return data.decode("utf-8")


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """An object_pairs_hook that refuses a key given twice (json.loads would keep the last)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise ValueError(f"duplicate key {twice!r} in a JSON object")
    return found


def _no_constant(name: str) -> float:
    """A parse_constant hook: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


def _objects(path: str | Path, text: str, keys: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    """(line, object) per non-blank line of a JSONL file, each object with exactly `keys`."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise InputError(path, number, "malformed JSON", exc.msg) from None
        except ValueError as exc:
            raise InputError(path, number, "malformed JSON", str(exc)) from None
        if not isinstance(value, dict):
            raise InputError(path, number, "expected a JSON object", f"found {type(value).__name__}")
        missing = [key for key in keys if key not in value]
        if missing:
            raise InputError(path, number, f"missing {missing[0]}", f"expected the keys {', '.join(keys)}")
        extra = sorted(key for key in value if key not in keys)
        if extra:
            raise InputError(path, number, f"unexpected key {extra[0]}", f"expected the keys {', '.join(keys)}")
        yield number, value


def _string(path: str | Path, line: int, value: object, key: str) -> str:
    """A JSON value that must be a non-empty string."""
    if not isinstance(value, str):
        raise InputError(path, line, f"{key} is not a string", f"found {json.dumps(value)[:40]}")
    if not value.strip():
        raise InputError(path, line, f"empty {key}")
    return value


def _identifier(path: str | Path, line: int, value: object, key: str) -> str:
    """A non-empty string without whitespace: an id that must survive a TREC file."""
    value = _string(path, line, value, key)
    if ANY_WHITESPACE.search(value):
        raise InputError(path, line, f"{key} contains whitespace", repr(value))
    return value


def _integer(value: object) -> bool:
    """A JSON integer (true and false are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _first_lines(path: str | Path, rows: list, key: Callable, what: str) -> dict[str, int]:
    """id -> line of the rows, or an InputError at the first id given twice."""
    first: dict[str, int] = {}
    for row in rows:
        if key(row) in first:
            raise InputError(path, row.line, f"duplicate {what}", f"{key(row)!r}, first at line {first[key(row)]}")
        first[key(row)] = row.line
    return first


def read_tasks(path: str | Path, data: bytes) -> list[Task]:
    """The tasks of a tasks.jsonl, checked."""
    tasks = []
    for line, record in _objects(path, _text(path, data), TASK_KEYS):
        task_id = _identifier(path, line, record["task_id"], "task_id")
        question = _string(path, line, record["question"], "question")
        requirements = record["requirements"]
        if not isinstance(requirements, list) or not all(isinstance(r, str) for r in requirements):
            raise InputError(path, line, "requirements is not a list of strings", json.dumps(requirements)[:40])
        if not requirements:
            raise InputError(path, line, "empty requirements", f"task {task_id}")
        blank = [i for i, r in enumerate(requirements) if not r.strip()]
        if blank:
            raise InputError(path, line, "empty requirement", f"task {task_id}, requirement {blank[0]}")
        if record["split"] not in SPLITS:
            raise InputError(path, line, "split is not development or final", json.dumps(record["split"])[:40])
        tasks.append(Task(line, task_id, question, tuple(requirements), record["split"]))
    if not tasks:
        raise InputError(path, 1, "no tasks in the file")
    _first_lines(path, tasks, lambda t: t.task_id, "task_id")
    return tasks


def read_documents(path: str | Path, data: bytes) -> list[Document]:
    """The documents of a documents.jsonl, checked."""
    documents = [
        Document(line, _identifier(path, line, record["doc_id"], "doc_id"), _string(path, line, record["text"], "text"))
        for line, record in _objects(path, _text(path, data), DOCUMENT_KEYS)
    ]
    if not documents:
        raise InputError(path, 1, "no documents in the file")
    _first_lines(path, documents, lambda d: d.doc_id, "doc_id")
    return documents


# -- the pool key: one JSON object, walked so that every member keeps its line -----------------------
class _Walker:
    """A cursor over one JSON text that reads values with json's own decoder and knows its line."""

    decoder = json.JSONDecoder(parse_constant=_no_constant)

    def __init__(self, path: str | Path, text: str) -> None:
        self.path, self.text, self.at = path, text, 0

    def line(self) -> int:
        """The line of the cursor."""
        return self.text.count("\n", 0, self.at) + 1

    def skip(self) -> str:
        """Move past whitespace; the next character ('' at the end)."""
        self.at = WHITESPACE.match(self.text, self.at).end()
        return self.text[self.at : self.at + 1]

    def expect(self, options: str, rule: str = "malformed JSON") -> str:
        """Consume one of the characters in `options` after whitespace, or raise an InputError."""
        found = self.skip()
        if not found or found not in options:
            shown = " or ".join(repr(c) for c in options)
            raise InputError(self.path, self.line(), rule, f"expected {shown}, found {found or 'the end'!r}")
        self.at += 1
        return found

    def value(self) -> tuple[int, object]:
        """(line, value) of the next JSON value."""
        self.skip()
        line = self.line()
        try:
            value, self.at = self.decoder.raw_decode(self.text, self.at)
        except json.JSONDecodeError as exc:
            raise InputError(self.path, exc.lineno, "malformed JSON", exc.msg) from None
        except ValueError as exc:
            raise InputError(self.path, line, "malformed JSON", str(exc)) from None
        return line, value


def read_pool_key(path: str | Path, data: bytes) -> tuple[list[PoolMember], dict[str, int], int]:
    """The members of a pool-key.json, the line of each task's key, and the line that closes the object.

    Checked here: the shape, a task given twice, a non-string or repeated member, an empty pool.
    """
    walker = _Walker(path, _text(path, data))
    shape = "expected a JSON object of task_id: [doc_id, ...]"
    walker.expect("{", shape)
    if walker.skip() == "}":
        raise InputError(path, walker.line(), "no pools in the file")
    members: list[PoolMember] = []
    task_lines: dict[str, int] = {}
    more = True
    while more:
        if walker.skip() != '"':
            raise InputError(path, walker.line(), shape, "expected a task_id string")
        line, task_id = walker.value()
        task_id = _identifier(path, line, task_id, "task_id")
        if task_id in task_lines:
            detail = f"{task_id!r}, first at line {task_lines[task_id]}"
            raise InputError(path, line, "task listed twice in the pool key", detail)
        task_lines[task_id] = line
        walker.expect(":")
        members.extend(_pool_members(walker, task_id))
        more = walker.expect(",}") == ","
    closing = walker.text.count("\n", 0, walker.at - 1) + 1
    if walker.skip():
        raise InputError(path, walker.line(), "malformed JSON", "data after the JSON object")
    return members, task_lines, closing


def _pool_members(walker: _Walker, task_id: str) -> list[PoolMember]:
    """The members of one task's pool: a non-empty list of distinct doc_id strings."""
    path = walker.path
    if walker.skip() != "[":
        line, value = walker.value()
        raise InputError(
            path, line, "pool is not a list of doc_id strings", f"task {task_id}: {json.dumps(value)[:40]}"
        )
    start = walker.line()
    walker.at += 1
    members: list[PoolMember] = []
    first: dict[str, int] = {}
    more = walker.skip() != "]"
    if not more:
        raise InputError(path, start, "empty pool", f"task {task_id}")
    while more:
        line, doc_id = walker.value()
        if not isinstance(doc_id, str):
            raise InputError(
                path, line, "pool is not a list of doc_id strings", f"task {task_id}: {json.dumps(doc_id)[:40]}"
            )
        doc_id = _identifier(path, line, doc_id, "doc_id")
        if doc_id in first:
            raise InputError(
                path,
                line,
                "doc_id listed twice in a pool",
                f"task {task_id}, {doc_id!r}, first at line {first[doc_id]}",
            )
        first[doc_id] = line
        members.append(PoolMember(line, task_id, doc_id, len(members)))
        more = walker.expect(",]") == ","
    return members


def read_judgments(path: str | Path, data: bytes) -> list[Judgment]:
    """The judgments of a judgments.jsonl, checked on their own (ids against the bundle: `_check_judgments`)."""
    judgments = []
    for line, record in _objects(path, _text(path, data), JUDGMENT_KEYS):
        task_id = _identifier(path, line, record["task_id"], "task_id")
        doc_id = _identifier(path, line, record["doc_id"], "doc_id")
        if record["judge"] not in JUDGES:
            raise InputError(path, line, "judge is not A or B", json.dumps(record["judge"])[:40])
        grade = record["grade"]
        if not _integer(grade):
            raise InputError(path, line, "grade is not an integer", json.dumps(grade)[:40])
        if grade not in GRADES:
            raise InputError(path, line, "grade outside 0..3", str(grade))
        obligations = record["obligations"]
        if not isinstance(obligations, list) or not all(_integer(o) for o in obligations):
            raise InputError(path, line, "obligations is not a list of integers", json.dumps(obligations)[:40])
        if len(set(obligations)) != len(obligations):
            raise InputError(path, line, "requirement listed twice in obligations", json.dumps(obligations)[:40])
        judgments.append(Judgment(line, task_id, doc_id, record["judge"], grade, tuple(obligations)))
    if not judgments:
        raise InputError(path, 1, "no judgments in the file")
    return judgments


# -- checks against the loaded bundle ---------------------------------------------------------------
def _require(wh: Warehouse, path: str | Path, bundle: str, needed: str) -> None:
    """An InputError unless the file behind `needed` is loaded for `bundle`, naming that file."""
    if loaded_sha(wh, "meta.sources", needed, bundle) is None:
        file, loader = NEEDS[needed]
        raise InputError(path, 0, f"load the bundle's {file} first ({loader})", f"bundle {bundle!r} has none")


def _ids(wh: Warehouse, table: str, column: str, bundle: str) -> set[str]:
    """The ids in `column` of the bundle's rows of `table`."""
    return {row[0] for row in wh.sql(f"SELECT {column} FROM {table} WHERE bundle = ?", [bundle])}


def _check_pool(path: str | Path, members: list[PoolMember], task_lines: dict[str, int], closing: int,
                tasks: set[str], documents: set[str]) -> None:  # fmt: skip
    """Every pooled task and member is loaded, and every loaded task has a pool."""
    for task_id, line in task_lines.items():
        if task_id not in tasks:
            raise InputError(path, line, "unknown task_id", f"{task_id!r} is not in the bundle's tasks")
    for member in members:
        if member.doc_id not in documents:
            raise InputError(
                path, member.line, "pool member without a document", f"task {member.task_id}, doc_id {member.doc_id!r}"
            )
    unpooled = sorted(tasks - set(task_lines))
    if unpooled:
        more = f" and {len(unpooled) - 1} more" if len(unpooled) > 1 else ""
        raise InputError(path, closing, "task without a pool", f"{unpooled[0]!r}{more}")


def _check_judgments(path: str | Path, judgments: list[Judgment], requirements: dict[str, int], documents: set[str],
                     pool: set[tuple[str, str]]) -> None:  # fmt: skip
    """Ids, pairs and requirement indices against the loaded bundle; each judge judges a pair once."""
    first: dict[tuple[str, str, str], int] = {}
    for j in judgments:
        if j.task_id not in requirements:
            raise InputError(path, j.line, "unknown task_id", f"{j.task_id!r} is not in the bundle's tasks")
        if j.doc_id not in documents:
            raise InputError(path, j.line, "unknown doc_id", f"{j.doc_id!r} is not in the bundle's documents")
        if (j.task_id, j.doc_id) not in pool:
            raise InputError(path, j.line, "pair outside the pool", f"task {j.task_id}, doc_id {j.doc_id}")
        count = requirements[j.task_id]
        wrong = [o for o in j.obligations if not 0 <= o < count]
        if wrong:
            detail = f"{wrong[0]}; task {j.task_id} has requirements 0..{count - 1}"
            raise InputError(path, j.line, "requirement index out of range", detail)
        key = (j.task_id, j.doc_id, j.judge)
        if key in first:
            detail = f"judge {j.judge}, task {j.task_id}, doc_id {j.doc_id}, first at line {first[key]}"
            raise InputError(path, j.line, "judge judged the same pair twice", detail)
        first[key] = j.line


# -- vectors ----------------------------------------------------------------------------------------
def read_vectors(
    path: str | Path, data: bytes, documents: set[str], key: str = "doc_id", what: str = "document"
) -> tuple[list[str], np.ndarray]:
    """(ids, float32 matrix) of a vectors Parquet file (columns `key`, vector: a bundle's document vectors,
    or with key task_id its question vectors), checked against the loaded ids; rows count from 1 as lines."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(path, 0, "not a Parquet file", str(exc)[:80]) from None
    if table.column_names != [key, "vector"]:
        raise InputError(path, 0, f"expected the columns {key}, vector", f"found {', '.join(table.column_names)}")
    ids, vectors = table.column(key).combine_chunks(), table.column("vector").combine_chunks()
    if not pa.types.is_string(ids.type) and not pa.types.is_large_string(ids.type):
        raise InputError(path, 0, f"{key} is not a string column", str(ids.type))
    listed = pa.types.is_list(vectors.type) or pa.types.is_large_list(vectors.type)
    if not (listed or pa.types.is_fixed_size_list(vectors.type)) or not pa.types.is_floating(vectors.type.value_type):
        raise InputError(path, 0, "vector is not a list of floating-point numbers", str(vectors.type))
    if not len(table):
        raise InputError(path, 0, "no vectors in the file")
    doc_ids = ids.to_pylist()
    lengths = vectors.value_lengths().to_numpy(zero_copy_only=False) if listed else None
    null = vectors.is_null().to_numpy(zero_copy_only=False)
    first: dict[str, int] = {}
    for row, doc_id in enumerate(doc_ids, start=1):
        if doc_id is None or null[row - 1]:
            raise InputError(path, row, f"missing {key} or vector")
        if doc_id not in documents:
            raise InputError(path, row, f"unknown {key}", f"{doc_id!r} is not in the bundle's {what}s")
        if doc_id in first:
            raise InputError(path, row, f"duplicate {key}", f"{doc_id!r}, first at row {first[doc_id]}")
        first[doc_id] = row
        size = int(lengths[row - 1]) if listed else vectors.type.list_size
        if size != DIMENSION:
            raise InputError(path, row, "vector of the wrong dimension", f"{size}, expected {DIMENSION}")
    matrix = _matrix(path, vectors)
    missing = sorted(documents - set(first))
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise InputError(path, 0, f"{what} without a vector", f"{missing[0]!r}{more}")
    return doc_ids, matrix


def _matrix(path: str | Path, vectors: pa.Array) -> np.ndarray:
    """The vectors as an (n, DIMENSION) float32 matrix, or an InputError at the first that is not finite
    or not of unit norm (norms computed in float64)."""
    values = vectors.flatten().to_numpy(zero_copy_only=False).astype(np.float64).reshape(-1, DIMENSION)
    finite = np.isfinite(values).all(axis=1)
    if not finite.all():
        raise InputError(path, int(np.argmin(finite)) + 1, "vector is not finite", "NaN or infinite component")
    norms = np.sqrt((values * values).sum(axis=1))
    off = np.abs(norms - 1.0) > NORM_TOLERANCE
    if off.any():
        row = int(np.argmax(off))
        raise InputError(path, row + 1, "vector is not unit norm", f"norm {norms[row]:.6g}, tolerance {NORM_TOLERANCE}")
    return values.astype(np.float32)


# -- writing ----------------------------------------------------------------------------------------
def bundle_name(path: str | Path) -> str:
    """A bundle is a directory of files: its name (the file's stem if there is none)."""
    return Path(path).resolve().parent.name or Path(path).stem


def _replace(wh: Warehouse, bundle: str, path: str | Path, sha: str, rows: int, loader: str, key: str,
             tables: dict[str, pa.Table], meta: str = "meta.sources") -> None:  # fmt: skip
    """One transaction: the bundle's rows of every table in `tables` replaced, dependents cleared, source recorded."""
    names = {table: f"rh_evidence_{i}" for i, table in enumerate(tables)}
    with ExitStack() as registered:
        for table, arrow in tables.items():
            registered.enter_context(wh.registered(names[table], arrow))
        with wh.transaction():
            for table in tables:
                wh.sql(f"DELETE FROM {table} WHERE bundle = ?", [bundle])
                wh.sql(f"INSERT INTO {table} BY NAME SELECT * FROM {names[table]}")
            for dependent in DEPENDENTS.get(key, ()):
                wh.sql(f"DELETE FROM {dependent} WHERE bundle = ?", [bundle])
                wh.sql(f"DELETE FROM {meta} WHERE table_name = ? AND name = ?", [dependent, bundle])
            record_source(wh, meta, key, bundle, path, sha, rows, loader)


def _columns(bundle: str, rows: list, **columns: Callable) -> pa.Table:
    """An Arrow table with a `bundle` column and one column per keyword, each a function of a row."""
    return pa.table({"bundle": [bundle] * len(rows), **{name: [get(r) for r in rows] for name, get in columns.items()}})


def _load(wh: Warehouse, path: str | Path, name: str | None, key: str, loader: str,
          build: Callable[[str, str | Path, bytes], tuple[int, dict[str, pa.Table]]]) -> LoadResult:  # fmt: skip
    """Read, check and load one main-file bundle file (a no-op for the same bytes under the same name)."""
    data = read_file(path)
    sha = sha256_bytes(data)
    bundle = name or bundle_name(path)
    previous = loaded_sha(wh, "meta.sources", key, bundle)
    if previous == sha:
        return LoadResult(key, bundle, str(path), sha, 0, "unchanged")
    rows, tables = build(bundle, path, data)
    _replace(wh, bundle, path, sha, rows, loader, key, tables)
    return LoadResult(key, bundle, str(path), sha, rows, "replaced" if previous else "loaded")


def _task_tables(bundle: str, path: str | Path, data: bytes) -> tuple[int, dict[str, pa.Table]]:
    tasks = read_tasks(path, data)
    requirements = [(t.task_id, i, text) for t in tasks for i, text in enumerate(t.requirements)]
    return len(tasks), {
        TASKS: _columns(bundle, list(enumerate(tasks)), task_id=lambda r: r[1].task_id, row_index=lambda r: r[0],
                        question=lambda r: r[1].question, split=lambda r: r[1].split),
        "raw.evidence_requirements": _columns(bundle, requirements, task_id=lambda r: r[0],
                                              requirement=lambda r: r[1], text=lambda r: r[2]),
    }  # fmt: skip


def _document_tables(bundle: str, path: str | Path, data: bytes) -> tuple[int, dict[str, pa.Table]]:
    documents = read_documents(path, data)
    rows = list(enumerate(documents))
    return len(documents), {
        DOCUMENTS: _columns(
            bundle, rows, doc_id=lambda r: r[1].doc_id, row_index=lambda r: r[0], text=lambda r: r[1].text
        )
    }


@writes_inputs
def load_evidence_tasks(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A bundle's tasks.jsonl into raw.evidence_tasks and raw.evidence_requirements.

    Example: load_evidence_tasks(wh, "data/evidence_demo/tasks.jsonl")  # bundle 'evidence_demo'
    """
    return _load(wh, path, name, TASKS, "evidence.tasks", _task_tables)


@writes_inputs
def load_evidence_documents(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A bundle's documents.jsonl into raw.evidence_documents.

    Example: load_evidence_documents(wh, "data/evidence_demo/documents.jsonl")
    """
    return _load(wh, path, name, DOCUMENTS, "evidence.documents", _document_tables)


@writes_inputs
def load_evidence_pool(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A bundle's pool-key.json into raw.evidence_pools; the tasks and documents must be loaded first.

    Example: load_evidence_pool(wh, "data/evidence_demo/pool-key.json")
    """

    def build(bundle: str, path: str | Path, data: bytes) -> tuple[int, dict[str, pa.Table]]:
        _require(wh, path, bundle, TASKS)
        _require(wh, path, bundle, DOCUMENTS)
        members, task_lines, closing = read_pool_key(path, data)
        tasks, documents = _ids(wh, TASKS, "task_id", bundle), _ids(wh, DOCUMENTS, "doc_id", bundle)
        _check_pool(path, members, task_lines, closing, tasks, documents)
        table = _columns(bundle, members, task_id=lambda m: m.task_id, doc_id=lambda m: m.doc_id,
                         position=lambda m: m.position)  # fmt: skip
        return len(members), {POOLS: table}

    return _load(wh, path, name, POOLS, "evidence.pool", build)


@writes_inputs
def load_evidence_vectors(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A bundle's document vectors (Parquet: doc_id, vector) into raw.evidence_vectors; documents first.

    Example: load_evidence_vectors(wh, "r02/vectors.parquet", "r02")
    """

    def build(bundle: str, path: str | Path, data: bytes) -> tuple[int, dict[str, pa.Table]]:
        _require(wh, path, bundle, DOCUMENTS)
        doc_ids, matrix = read_vectors(path, data, _ids(wh, DOCUMENTS, "doc_id", bundle))
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), DIMENSION)
        table = pa.table({"bundle": [bundle] * len(doc_ids), "doc_id": doc_ids, "vector": vectors})
        return len(doc_ids), {VECTORS: table}

    return _load(wh, path, name, VECTORS, "evidence.vectors", build)


@writes_inputs
def load_evidence_question_vectors(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A bundle's own question vectors (Parquet: task_id, vector) into raw.evidence_facet_vectors as its
    questions (facet 0), under the name `<bundle>:questions` (given, or the bundle's directory name plus
    the suffix); the tasks first. Seed 000 keeps "all 48 question vectors unchanged": the study then encodes
    only the requirements (generators.py) and its facet vectors (with the protocol's
    own_question_vectors = true) take these as the questions.

    Example: load_evidence_question_vectors(wh, "r02/question_vectors.parquet", "r02:questions")
    """
    name = name or bundle_name(path) + QUESTIONS
    if not name.endswith(QUESTIONS) or name == QUESTIONS:
        raise InputError(path, 0, f"question vectors load under the name <bundle>{QUESTIONS}", f"not {name!r}")

    def build(loaded: str, path: str | Path, data: bytes) -> tuple[int, dict[str, pa.Table]]:
        bundle = loaded.removesuffix(QUESTIONS)
        _require(wh, path, bundle, TASKS)
        task_ids, matrix = read_vectors(path, data, _ids(wh, TASKS, "task_id", bundle), "task_id", "task")
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), DIMENSION)
        table = pa.table({"bundle": [loaded] * len(task_ids), "task_id": task_ids,
                          "facet": pa.array([0] * len(task_ids), pa.int32()), "vector": vectors})  # fmt: skip
        return len(task_ids), {FACET_VECTORS: table}

    return _load(wh, path, name, FACET_VECTORS, "evidence.question_vectors", build)


def load_evidence_judgments(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A bundle's judgments.jsonl into the labels file: evidence_judgments and evidence_obligations.

    Needs the bundle's tasks, documents and pool in the main file; checked against them on every load.
    Example: load_evidence_judgments(wh, "data/evidence_demo/judgments.jsonl")
    """
    data = read_file(path)
    sha = sha256_bytes(data)
    bundle = name or bundle_name(path)
    for needed in (TASKS, DOCUMENTS, POOLS):
        _require(wh, path, bundle, needed)
    judgments = read_judgments(path, data)
    requirements = dict(
        wh.sql("SELECT task_id, count(*) FROM raw.evidence_requirements WHERE bundle = ? GROUP BY task_id", [bundle])
    )
    pool = set(wh.sql(f"SELECT task_id, doc_id FROM {POOLS} WHERE bundle = ?", [bundle]))
    _check_judgments(path, judgments, requirements, _ids(wh, DOCUMENTS, "doc_id", bundle), pool)
    obligations = [(j, o) for j in judgments for o in j.obligations]
    tables = {
        f"labels.{JUDGMENTS}": _columns(bundle, judgments, task_id=lambda j: j.task_id, doc_id=lambda j: j.doc_id,
                                        judge=lambda j: j.judge, grade=lambda j: j.grade, line=lambda j: j.line),
        "labels.evidence_obligations": _columns(bundle, obligations, task_id=lambda r: r[0].task_id,
                                                doc_id=lambda r: r[0].doc_id, judge=lambda r: r[0].judge,
                                                requirement=lambda r: r[1]),
    }  # fmt: skip
    with wh.labels():
        previous = loaded_sha(wh, "labels.meta.sources", JUDGMENTS, bundle)
        if previous == sha:
            return LoadResult(JUDGMENTS, bundle, str(path), sha, 0, "unchanged")
        _replace(wh, bundle, path, sha, len(judgments), "evidence.judgments", JUDGMENTS, tables, "labels.meta.sources")
    return LoadResult(JUDGMENTS, bundle, str(path), sha, len(judgments), "replaced" if previous else "loaded")
