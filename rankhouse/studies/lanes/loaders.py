"""The lanes study's inputs (seed 002), each a loader (registered in rankhouse/studies/lanes/__init__.py), one
transaction per file, errors naming the file, the line and the rule:

lanes.narratives     topics: a TOML file of `[[group]]` (or `[[topic]]`) tables with `id`, `narrative` and
                     `[[group.subnarrative]]` tables with `name` and `text` (studies/banking77_groups.toml),
                     or JSON lines {"topic", "narrative", "subnarratives": [{"name", "text"}], "classes"?}.
                     Loaded under a corpus name into raw.lane_units: the untouched narrative is the unit
                     `narrative`, each subnarrative the unit `facet:<name>`. Each unit is also a query of the
                     corpus in raw.queries (qid `<topic>/<unit>`), so that the BM25 models can build lanes
                     from it; the corpus must have no queries from another loader.
lanes.topic_classes  labels: the classes a topic maps to (a TOML topic's `intents` or `classes`, a JSON
                     line's `classes`), into the labels file; a document of one of them (document_classes)
                     is relevant to the topic.
lanes.runs           lane runs: TREC lines `topic Q0 docno rank score lane`, the tag being the lane id
                     (`narrative` or `facet:<subnarrative>`), the score the lane's aggregate score A_u(d)
                     and the rank the document's source rank; into raw.lane_runs under a lane-set name.
lanes.passage_cache  a passage-score cache: lines `topic unit docno chunk score` (chunk 0-based, as
                     models/lanes/lane_chunks.sql numbers them), loaded under the name of the scorer that
                     made the scores; rescoring (passages.py) reads it first.

Rules. Narratives: UTF-8; at least one topic; a topic id and subnarrative names are non-empty and
without whitespace (they go into TREC files as qid and tag); no topic twice; no subnarrative name twice
within a topic; non-empty narrative and subnarrative texts. Topic classes: every topic has a non-empty
list of non-empty class names, none twice. Lane runs: a TREC run line's rules (trec.run_checks: at
least 6 fields, a whole-number rank, a finite score), a rank of at least 1 and a tag `narrative` or
`facet:<name>`; one line per (topic, lane, docno); at least one line. Passage cache: exactly 5 fields;
unit `narrative` or `facet:<name>`; a whole-number chunk of at least 0; a finite score; one line per
(topic, unit, docno, chunk); at least one line. Both whitespace-separated formats are staged and
checked in SQL as the TREC loaders are (lines.stage_fields, lines.check_staged), with their rules
for blanks and numbers (ASCII blanks between fields; no `_` or non-ASCII character in a number); blank
lines and lines starting with `#` are skipped. Every file may start with a UTF-8 BOM, which is stripped.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from rankhouse.errors import InputError
from rankhouse.loaders.lines import (
    FIRST_LINE,
    Check,
    LineFormat,
    ascii_blanks,
    at_least,
    check_utf8,
    field_count,
    finite_number,
    finite_value,
    identifier,
    stage_and_check,
    whole_number,
    whole_value,
    without_bom,
    written_number,
)
from rankhouse.loaders.sources import LoadResult, loaded_sha, read_file, record_source, sha256_bytes, writes_inputs
from rankhouse.loaders.trec import RANK, SCORE, run_checks
from rankhouse.warehouse import Warehouse

NARRATIVE = "narrative"
FACET = "facet:"
UNIT_PATTERN = r"narrative|facet:\S+"  # RE2 and Python alike
STAGED = "rh_lanes_staged"


# -- narratives --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Topic:
    """One topic of a narratives file: its id, untouched narrative, subnarratives (name, text) and classes."""

    line: int
    topic: str
    narrative: str
    subnarratives: tuple[tuple[str, str], ...]
    classes: tuple[str, ...] | None


def _text(path: str | Path, line: int, value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, line, f"empty {what}", repr(value)[:60])
    return value


def _classes(path: str | Path, line: int, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise InputError(path, line, "classes must be a non-empty list of names", repr(value)[:60])
    classes = tuple(identifier(path, line, c, "class") for c in value)
    if len(set(classes)) != len(classes):
        raise InputError(path, line, "a class is listed twice for this topic", repr(value)[:80])
    return classes


def _topic(path: str | Path, line: int, topic: object, narrative: object, subnarratives: object,
           classes: object) -> Topic:  # fmt: skip
    topic = identifier(path, line, topic, "topic id")
    narrative = _text(path, line, narrative, "narrative")
    if not isinstance(subnarratives, list):
        raise InputError(path, line, "subnarratives must be a list of {name, text}", repr(subnarratives)[:60])
    pairs, seen = [], set()
    for entry in subnarratives:
        if not isinstance(entry, dict) or set(entry) - {"name", "text"} or not {"name", "text"} <= set(entry):
            raise InputError(path, line, "a subnarrative has exactly a name and a text", repr(entry)[:60])
        name = identifier(path, line, entry["name"], "subnarrative name")
        if name in seen:
            raise InputError(path, line, "subnarrative name given twice in this topic", name)
        seen.add(name)
        pairs.append((name, _text(path, line, entry["text"], "subnarrative text")))
    return Topic(line, topic, narrative, tuple(pairs), _classes(path, line, classes))


def read_narratives(path: str | Path, data: bytes) -> list[Topic]:
    """The topics of a narratives file (TOML groups or JSON lines), checked."""
    check_utf8(path, data)
    text = without_bom(data).decode("utf-8")
    if str(path).endswith(".jsonl"):
        topics = _jsonl_topics(path, text)
    else:
        topics = _toml_topics(path, text)
    if not topics:
        raise InputError(path, 1, "no topics in the file")
    first: dict[str, int] = {}
    for topic in topics:
        if topic.topic in first:
            raise InputError(
                path, topic.line, "topic id given twice", f"{topic.topic}, first at line {first[topic.topic]}"
            )
        first[topic.topic] = topic.line
    return topics


def _toml_topics(path: str | Path, text: str) -> list[Topic]:
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise InputError(path, int(line.group(1)) if line else 0, "not valid TOML", str(exc)) from None
    keys = [k for k in ("group", "topic") if k in spec]
    if len(keys) != 1 or not isinstance(spec[keys[0]], list):
        raise InputError(path, 1, "expected an array of [[group]] or of [[topic]] tables")
    key = keys[0]
    header = re.compile(rf"^\s*\[\[\s*{key}\s*\]\]")
    lines = [n for n, line in enumerate(text.split("\n"), start=1) if header.match(line)]
    topics = []
    for i, entry in enumerate(spec[key]):
        line = lines[i] if i < len(lines) else 0
        for needed in ("id", "narrative"):
            if needed not in entry:
                raise InputError(path, line, f"[[{key}]] lacks {needed}")
        classes = entry.get("intents", entry.get("classes"))
        topics.append(_topic(path, line, entry["id"], entry["narrative"], entry.get("subnarrative", []), classes))
    return topics


def _jsonl_topics(path: str | Path, text: str) -> list[Topic]:
    topics = []
    allowed = {"topic", "narrative", "subnarratives", "classes"}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, number, "malformed JSON", exc.msg) from None
        if not isinstance(record, dict):
            raise InputError(path, number, "expected a JSON object")
        missing = sorted({"topic", "narrative", "subnarratives"} - set(record))
        if missing:
            raise InputError(path, number, f"missing {missing[0]}", "expected topic, narrative, subnarratives")
        extra = sorted(set(record) - allowed)
        if extra:
            raise InputError(path, number, f"unexpected key {extra[0]}")
        topics.append(
            _topic(path, number, record["topic"], record["narrative"], record["subnarratives"], record.get("classes"))
        )
    return topics


def unit_rows(corpus: str, topics: list[Topic]) -> list[tuple]:
    """raw.lane_units rows: (corpus, topic, topic_row, unit, unit_row, text, qid)."""
    rows = []
    for topic_row, topic in enumerate(topics):
        units = [(NARRATIVE, topic.narrative)] + [(FACET + name, text) for name, text in topic.subnarratives]
        for unit_row, (unit, text) in enumerate(units):
            rows.append((corpus, topic.topic, topic_row, unit, unit_row, text, f"{topic.topic}/{unit}"))
    return rows


@writes_inputs
def load_narratives(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Topics with their narrative and subnarratives into raw.lane_units, and each unit as a query of corpus
    `name` (default: the file name without extension).  Example: load_narratives(wh, "groups.toml", "b77")"""
    data = read_file(path)
    sha = sha256_bytes(data)
    corpus = name or Path(path).stem
    previous = loaded_sha(wh, "meta.sources", "raw.lane_units", corpus)
    if previous == sha:
        return LoadResult("raw.lane_units", corpus, str(path), sha, 0, "unchanged")
    other = wh.sql(
        "SELECT path, loader FROM meta.sources WHERE table_name = 'raw.queries' AND name = ? AND loader <> ?",
        [corpus, "lanes.narratives"],
    )
    if other:
        raise InputError(
            path, 0, f"corpus {corpus!r} already has queries from another file",
            f"{other[0][0]} ({other[0][1]}); load the narratives under a corpus of their own",
        )  # fmt: skip
    rows = unit_rows(corpus, read_narratives(path, data))
    columns = ["corpus", "topic", "topic_row", "unit", "unit_row", "text", "qid"]
    with wh.registered("rh_units", pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})):
        with wh.transaction():
            wh.sql("DELETE FROM raw.lane_units WHERE corpus = ?", [corpus])
            wh.sql("DELETE FROM raw.queries WHERE corpus = ?", [corpus])
            wh.sql(f"INSERT INTO raw.lane_units SELECT {', '.join(columns)} FROM rh_units")
            wh.sql(
                "INSERT INTO raw.queries SELECT corpus, qid, row_number() OVER (ORDER BY topic_row, unit_row) - 1, "
                "text FROM rh_units"
            )
            record_source(wh, "meta.sources", "raw.lane_units", corpus, path, sha, len(rows), "lanes.narratives")
            record_source(wh, "meta.sources", "raw.queries", corpus, path, sha, len(rows), "lanes.narratives")
    return LoadResult("raw.lane_units", corpus, str(path), sha, len(rows), "replaced" if previous else "loaded")


def load_topic_classes(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """The classes of each topic of a narratives file, into the labels file (topic_classes) under corpus
    `name`.  Example: load_topic_classes(wh, "studies/banking77_groups.toml", "banking77_lanes")"""
    data = read_file(path)
    sha = sha256_bytes(data)
    corpus = name or Path(path).stem
    topics = read_narratives(path, data)
    for topic in topics:
        if topic.classes is None:
            raise InputError(path, topic.line, "topic has no classes (intents)", topic.topic)
    rows = [(corpus, t.topic, c) for t in topics for c in t.classes]
    with wh.labels():
        previous = loaded_sha(wh, "labels.meta.sources", "topic_classes", corpus)
        if previous == sha:
            return LoadResult("topic_classes", corpus, str(path), sha, 0, "unchanged")
        classes = pa.table({"corpus": [r[0] for r in rows], "topic": [r[1] for r in rows],
                            "class": [r[2] for r in rows]})  # fmt: skip
        with wh.registered("rh_classes", classes), wh.transaction():
            wh.sql("DELETE FROM labels.topic_classes WHERE corpus = ?", [corpus])
            wh.sql("INSERT INTO labels.topic_classes SELECT corpus, topic, class FROM rh_classes")
            record_source(wh, "labels.meta.sources", "topic_classes", corpus, path, sha, len(rows),
                          "lanes.topic_classes")  # fmt: skip
    return LoadResult("topic_classes", corpus, str(path), sha, len(rows), "replaced" if previous else "loaded")


# -- whitespace-separated inputs: lane runs and the passage cache --------------------------------------
def _unit(column: str, name: str, what: str) -> Check:
    """The rule that a field names a unit: `narrative` or `facet:<subnarrative>`."""
    broken = f"NOT regexp_full_match({column}, '{UNIT_PATTERN}')"
    return Check(f"{what} must be narrative or facet:<subnarrative>", broken, f"'{name} ' || {column}")


LANE_RUN = LineFormat(
    "lane run",
    6,
    (
        *run_checks("topic Q0 docno rank score lane"),
        at_least("f4", "rank", 1),
        _unit("f6", "lane", "lane (the tag)"),
    ),
    "f1, f6, f3",
    "duplicate document in this lane of this topic",
    FIRST_LINE,
)

PASSAGE_CACHE = LineFormat(
    "passage score",
    5,
    (
        ascii_blanks(5),
        field_count("topic unit docno chunk score", "nfields <> 5"),
        _unit("f2", "unit", "unit"),
        *written_number("f4", "chunk"),
        whole_number("f4", "chunk"),
        at_least("f4", "chunk", 0),
        *written_number("f5", "score"),
        *finite_number("f5", "score"),
    ),
    "f1, f2, f3, CAST(f4 AS DOUBLE)",
    "passage scored twice in this file",
    FIRST_LINE,
)


def _load_staged(wh: Warehouse, path: str | Path, name: str, table: str, fmt: LineFormat, select: str,
                 replace: str, loader: str) -> LoadResult:  # fmt: skip
    """One transaction: `replace` (a DELETE of the name's earlier rows) and the file's rows, if every line is good."""
    data = read_file(path)
    sha = sha256_bytes(data)
    previous = loaded_sha(wh, "meta.sources", table, name)
    if previous == sha:
        return LoadResult(table, name, str(path), sha, 0, "unchanged")
    try:
        rows = stage_and_check(wh, path, data, fmt, STAGED)
        with wh.transaction():
            wh.sql(replace, [name])
            wh.sql(f"INSERT INTO {table} SELECT ?, {select} FROM {STAGED}", [name])
            record_source(wh, "meta.sources", table, name, path, sha, rows, loader)
    finally:
        wh.sql(f"DROP TABLE IF EXISTS {STAGED}")
    return LoadResult(table, name, str(path), sha, rows, "replaced" if previous else "loaded")


@writes_inputs
def load_lane_runs(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """Lane runs (`topic Q0 docno rank score lane`) into raw.lane_runs under the lane set `name` (default:
    the file name).  Example: load_lane_runs(wh, "lanes.run", "lanes")"""
    return _load_staged(wh, path, name or Path(path).name, "raw.lane_runs", LANE_RUN,
                        f"f1, f6, f3, {RANK}, {SCORE}, line_no", "DELETE FROM raw.lane_runs WHERE lane_set = ?",
                        "lanes.runs")  # fmt: skip


@writes_inputs
def load_passage_cache(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A passage-score cache (`topic unit docno chunk score`) under the scorer `name` that made the scores
    (default: the file name).  Example: load_passage_cache(wh, "scores.tsv", "mxbai-rerank-base-v2")"""
    select = f"f1, f2, f3, CAST({whole_value('f4')} AS INTEGER), {finite_value('f5')}, NULL, NULL, NULL, line_no"
    return _load_staged(wh, path, name or Path(path).name, "raw.passage_score_cache", PASSAGE_CACHE, select,
                        # the file's earlier rows; scores the scorer wrote back stay (they carry their hashes)
                        "DELETE FROM raw.passage_score_cache WHERE scorer = ? AND line IS NOT NULL",
                        "lanes.passage_cache")  # fmt: skip
