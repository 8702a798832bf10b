"""Run files you can submit (seed 002, "Provenance and validation"): validation and manifest, for the run
files of any study (the lanes study writes its orderings with rankhouse/studies/lanes/runs.py).

validate  `validate_runs` checks what the seed lists, per file: six whitespace-separated fields on every
          line (no blank or comment lines) with `Q0` second; ranks that start at 1 for each topic and go up
          by one (a topic's lines together); finite scores that never increase within a topic; no
          (topic, docno) pair twice; document ids matching the allowed pattern (RE2 syntax); and across
          the files (the variants of one submission): the same topics and the same topic-document rows.
          Two submission rules are checked too: one run tag per file, and a different tag in each file.
          A line's rank and score rules are the loaders' (loaders/trec.py `run_checks`: ASCII blanks
          between fields, a whole-number rank, a finite score, numbers without `_` or non-ASCII
          characters); the rest is on top. A leading UTF-8 BOM is not part of a file's first topic.
          Each file is staged once (loaders/lines.py) and every rule is SQL over it: window functions
          for the sequences, a join across the files.
manifest  `write_manifest`: the SHA-256 of every input and output file, and per-topic receipts.

    >>> problems = validate_runs(["combo.run", "breadth.run"], doc_id_pattern=r"shard_\\S+")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from rankhouse.errors import InputError, RankhouseError
from rankhouse.loaders.lines import FIRST_LINE, Check, as_written, ascii_blanks, field_count, sql_text, stage_fields
from rankhouse.loaders.sources import read_file, sha256_file
from rankhouse.loaders.trec import RANK, RANK_CHECKS, SCORE, SCORE_CHECKS
from rankhouse.warehouse import Warehouse

FIELDS = "topic Q0 docno rank score tag"


@dataclass(frozen=True)
class RunProblem:
    """A broken rule: the file, the line (0: the file as a whole) and the rule, with details."""

    path: str
    line: int
    rule: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}" + (f" ({self.detail})" if self.detail else "")


# -- validation ---------------------------------------------------------------------------------------
STAGED = "rh_submission_staged"  # a file's lines (lines.stage_fields, every line)
LINES = "rh_submission_lines"  # its six-field lines, narrow, where other lines are among them
SEQUENCES = "rh_submission_sequences"  # six-field lines with what the sequence rules compare them to
PAIRS = "rh_submission_pairs"  # (topic, docno) pairs: first line, how many lines
DOCS = "rh_submission_docs"  # (file, topic, docno) of every file
FILES = "rh_submission_files"  # (file, path, tag) of every file

# The six-field lines, narrow: topic, rank and score (NULL where not a whole number, not finite, or not
# written as trec_eval reads it), and idx, which counts them in file order (their line number where every
# line has six fields).
SIX_LINES = f"""
    SELECT line_no, f1 AS topic, {as_written("f4", RANK)} AS rank, {as_written("f5", SCORE)} AS score,
           {{idx}} AS idx
    FROM {STAGED} WHERE nfields = 6
"""
# How many topics have lines apart: not one run of consecutive six-field lines.
SPLIT_TOPICS = """
    SELECT count(*) FROM (SELECT topic FROM ({lines}) GROUP BY topic HAVING max(idx) - min(idx) + 1 <> count(*))
"""
# Which run of its topic's lines a line is in: the number of other lines between it and the topic's
# first line, 0 in the first run (the gaps-and-islands key).
RUNS = """
    SELECT *, idx - min(idx) OVER topic_lines - row_number() OVER topic_lines + 1 AS run
    FROM ({lines})
    WINDOW topic_lines AS (PARTITION BY topic ORDER BY line_no)
"""
# What the sequence rules compare a line to within its run: the last rank (the rank before it, or one
# more than the one before that where that rank is not a whole number; 0 at the start of a run) and the
# lowest finite score before it; and whether it starts a topic again (the first line of a later run).
SEQUENCES_SQL = f"""
    CREATE OR REPLACE TEMP TABLE {SEQUENCES} AS
    SELECT line_no, rank, score,
           coalesce(last_value(rank - idx IGNORE NULLS) OVER before + idx - 1, count(*) OVER before) AS last_rank,
           min(score) OVER before AS last_score,
           run > 0 AND count(*) OVER before = 0 AS again
    FROM ({{runs}})
    WINDOW before AS (PARTITION BY topic, run ORDER BY line_no ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
"""
PAIRS_SQL = f"""
    CREATE OR REPLACE TEMP TABLE {PAIRS} AS
    SELECT f1, f3, min(line_no) AS first_line, count(*) AS lines FROM {STAGED} WHERE nfields = 6 GROUP BY f1, f3
"""


def _sequences(wh: Warehouse) -> None:
    """Create SEQUENCES for the staged file, with one window over its lines where nothing is out of place."""
    if wh.sql(f"SELECT count(*) FILTER (WHERE nfields <> 6) FROM {STAGED}")[0][0]:
        counted = SIX_LINES.format(idx="row_number() OVER (ORDER BY line_no)")
        wh.sql(f"CREATE OR REPLACE TEMP TABLE {LINES} AS {counted}")
        lines = f"SELECT * FROM {LINES}"
    else:
        lines = SIX_LINES.format(idx="line_no")
    split = wh.sql(SPLIT_TOPICS.format(lines=lines))[0][0]
    wh.sql(SEQUENCES_SQL.format(runs=RUNS.format(lines=lines) if split else f"SELECT *, 0 AS run FROM ({lines})"))


# What the rules of a line are evaluated over: the six-field lines, the same with their sequence
# columns, and the lines whose (topic, docno) came before.
SIX = f"{STAGED} WHERE nfields = 6 AND"
SEQUENCE = f"{SEQUENCES} JOIN {STAGED} USING (line_no) WHERE"
REPEATS = f"{STAGED} JOIN (SELECT * FROM {PAIRS} WHERE lines > 1) USING (f1, f3) WHERE nfields = 6 AND"


def _submission_rules(pattern: str | None) -> list[tuple[str, Check]]:
    """(relation, check) of the rules of a six-field line, in the order a line's problems are listed: a
    TREC run line's rank and score rules (trec.RANK_CHECKS, SCORE_CHECKS) and the submission's on top;
    `file_tag` is the file's first tag."""
    rules = [
        (SIX, Check("the second field must be Q0", "f2 <> 'Q0'", "f2")),
        (SIX, Check("run tag differs from the file's first", "f6 <> $file_tag", "f6 || ', not ' || $file_tag")),
        (SEQUENCE, Check("topic appears again after other topics", "again", "f1")),
        *((SIX, check) for check in RANK_CHECKS),
        (SEQUENCE, Check("ranks must start at 1 for each topic and go up by 1", "rank <> last_rank + 1",
                         "CASE WHEN last_rank <> 0 THEN 'rank ' || rank || ' after ' || last_rank "
                         "ELSE 'first rank ' || rank END")),
        *((SIX, check) for check in SCORE_CHECKS),
        (SEQUENCE, Check("score increases within the topic", "score > last_score",
                         "f5 || ' after ' || CAST(last_score AS VARCHAR)")),
        (REPEATS, Check("duplicate topic-document pair", "line_no > first_line",
                        f"f1 || ' ' || f3 || ', ' || {FIRST_LINE}")),
    ]  # fmt: skip
    if pattern is not None:
        rules.append((SIX, Check("document id does not match the allowed pattern",
                                 f"NOT regexp_full_match(f3, {sql_text(pattern)})",
                                 f"rh_repr(f3) || ' against ' || {sql_text(repr(pattern))}")))  # fmt: skip
    return rules


def _line_problems(wh: Warehouse, rules: list[tuple[str, Check]], tag: str) -> list[tuple[int, str, str]]:
    """(line, rule, detail) of every rule the staged file breaks, by line and then in the order of `rules`."""
    fields, blanks = field_count(FIELDS, "nfields <> 6"), ascii_blanks(6)
    parts = [
        f"SELECT line_no, 0 AS position, 'blank line' AS rule, '' AS detail FROM {STAGED} WHERE nfields = 0",
        f"SELECT line_no, 1, {sql_text(blanks.rule)}, {blanks.detail} FROM {STAGED} WHERE {blanks.broken}",
        f"SELECT line_no, 2, {sql_text(fields.rule)}, {fields.detail} FROM {STAGED} WHERE nfields NOT IN (0, 6)",
        *(f"SELECT line_no, {i}, {sql_text(c.rule)}, {c.detail} FROM {relation} {c.broken}"
          for i, (relation, c) in enumerate(rules, start=3)),
    ]  # fmt: skip
    query = f"SELECT line_no, rule, detail FROM ({' UNION ALL '.join(parts)}) ORDER BY line_no, position"
    return wh.sql(query, {"file_tag": tag})


def _check_file(wh: Warehouse, number: int, path: Path, rules: list[tuple[str, Check]], docs: bool) -> list[RunProblem]:
    """The problems of one file; its first tag goes to FILES and, with `docs`, its (topic, docno) pairs to DOCS."""
    shown = str(path)
    try:
        lines = stage_fields(wh, path, read_file(path), 6, STAGED, every_line=True)
    except InputError as exc:  # unreadable, or not UTF-8
        lines, problem = 0, RunProblem(shown, exc.line, exc.rule, exc.detail)
    else:
        problem = RunProblem(shown, 0, "no lines in the file")
    tag = wh.sql(f"SELECT arg_min(f6, line_no) FROM {STAGED} WHERE nfields = 6")[0][0] if lines else None
    wh.sql(f"INSERT INTO {FILES} VALUES (?, ?, ?)", [number, shown, tag])
    if not lines:
        return [problem]
    _sequences(wh)
    wh.sql(PAIRS_SQL)
    if docs:
        wh.sql(f"INSERT INTO {DOCS} SELECT ?, f1, f3 FROM {PAIRS}", [number])
    return [RunProblem(shown, line, rule, detail) for line, rule, detail in _line_problems(wh, rules, tag)]


# The rules across files, each file against the first: a tag no earlier file (of another path) has, the
# same topics, and for every topic the same documents.
ACROSS = f"""
    WITH first AS (
        SELECT path FROM {FILES} WHERE file = 0
    ),
    tags AS (
        SELECT f.file, 1 AS kind, '' AS topic, 'run tag also used by another file' AS rule,
               f.tag || ' in ' || e.path AS detail
        FROM {FILES} AS f
        JOIN (SELECT tag, min(file) AS file, arg_min(path, file) AS path FROM {FILES} GROUP BY tag) AS e
            ON e.tag = f.tag
        WHERE f.file > e.file AND f.path <> e.path
    ),
    topics AS (
        SELECT DISTINCT file, topic FROM {DOCS}
    ),
    topic_pairs AS (
        SELECT f.file, t.topic, bool_or(t.file = 0) AS in_first, bool_or(t.file = f.file) AS in_file
        FROM {FILES} AS f JOIN topics AS t ON t.file = 0 OR t.file = f.file
        WHERE f.file > 0
        GROUP BY f.file, t.topic
    ),
    topic_lists AS (
        SELECT file, coalesce(list(topic ORDER BY topic) FILTER (WHERE NOT in_file), []) AS missing,
               coalesce(list(topic ORDER BY topic) FILTER (WHERE NOT in_first), []) AS extra
        FROM topic_pairs
        GROUP BY file
        HAVING bool_or(NOT (in_first AND in_file))
    ),
    counts AS (
        SELECT file, topic, count(*) AS documents FROM {DOCS} GROUP BY file, topic
    ),
    shared AS (
        SELECT d.file, d.topic, count(*) AS documents
        FROM {DOCS} AS d JOIN {DOCS} AS e ON e.file = 0 AND e.topic = d.topic AND e.docno = d.docno
        WHERE d.file > 0
        GROUP BY d.file, d.topic
    )
    SELECT file, kind, topic, rule, detail FROM tags
    UNION ALL
    SELECT file, 2, '', 'topics differ from ' || (SELECT path FROM first),
           'missing ' || rh_list_repr(missing[:5]) || ', extra ' || rh_list_repr(extra[:5])
    FROM topic_lists
    UNION ALL
    SELECT c.file, 3, c.topic, 'rows differ from ' || (SELECT path FROM first),
           'topic ' || c.topic || ': ' || c.documents || ' documents, ' || e.documents || ' there'
           || CASE WHEN c.documents = e.documents THEN ', not the same ones' ELSE '' END
    FROM counts AS c
    JOIN counts AS e ON e.file = 0 AND e.topic = c.topic
    LEFT JOIN shared AS s ON s.file = c.file AND s.topic = c.topic
    WHERE c.file > 0 AND (c.documents <> e.documents OR coalesce(s.documents, 0) <> c.documents)
    ORDER BY file, kind, topic
"""


def _validator() -> Warehouse:
    """A throw-away in-memory warehouse with the validator's tables and Python's repr as SQL functions."""
    wh = Warehouse(":memory:")
    wh.con.create_function("rh_repr", repr, ["VARCHAR"], "VARCHAR")
    wh.con.create_function("rh_list_repr", repr, ["VARCHAR[]"], "VARCHAR")
    wh.sql(f"CREATE TEMP TABLE {FILES} (file INTEGER, path VARCHAR, tag VARCHAR)")
    wh.sql(f"CREATE TEMP TABLE {DOCS} (file INTEGER, topic VARCHAR, docno VARCHAR)")
    return wh


def _check_pattern(wh: Warehouse, pattern: str) -> None:
    """Raise a RankhouseError if `pattern` is not a regular expression in RE2's syntax."""
    try:
        wh.sql("SELECT regexp_full_match('', ?)", [pattern])
    except duckdb.Error as exc:
        reason = str(exc).removeprefix("Invalid Input Error: ")
        raise RankhouseError(
            f"the document id pattern {pattern!r} is not a regular expression (RE2 syntax): {reason}"
        ) from None


def validate_runs(paths: Sequence[str | Path], doc_id_pattern: str | None = None) -> list[RunProblem]:
    """Every broken rule of the run files, each file on its own and across them; empty when all is well.

    `doc_id_pattern` is a regular expression in RE2's syntax (DuckDB's regexp_full_match: no lookaround
    or backreferences; \\d, \\w and \\s are ASCII) that a whole document id must match (None: any id).
    Problems come file by file, by line and then in the order of the rules; the rules across files
    (on line 0 of the file that differs from the first) come last.
    """
    if not paths:
        raise RankhouseError("no run files to validate")
    with _validator() as wh:
        if doc_id_pattern:
            _check_pattern(wh, doc_id_pattern)
        rules = _submission_rules(doc_id_pattern or None)
        problems: list[RunProblem] = []
        for number, path in enumerate(map(Path, paths)):
            problems += _check_file(wh, number, path, rules, docs=len(paths) > 1)
        across = wh.sql(ACROSS)
        shown = dict(wh.sql(f"SELECT file, path FROM {FILES}"))
    return problems + [RunProblem(shown[file], 0, rule, detail) for file, _, _, rule, detail in across]


def summary(paths: Sequence[str | Path]) -> dict:
    """Topics and rows per file (of files that validate)."""
    out = {}
    with Warehouse(":memory:") as wh:
        for path in map(Path, paths):
            stage_fields(wh, path, read_file(path), 1, STAGED, every_line=True)
            topics, rows = wh.sql(f"SELECT count(DISTINCT f1), count(*) FROM {STAGED}")[0]
            out[path.name] = {"topics": topics, "rows": rows}
    return out


# -- manifest ------------------------------------------------------------------------------------------
def write_manifest(path: str | Path, *, inputs: dict[str, str | Path], outputs: Sequence[str | Path],
                   extra: dict | None = None) -> Path:  # fmt: skip
    """A JSON manifest: {inputs: {key: {path, sha256}}, outputs: {name: {sha256, bytes}}, ...extra}."""
    path = Path(path)
    document = {
        "inputs": {key: {"path": str(p), "sha256": sha256_file(p)} for key, p in sorted(inputs.items())},
        "outputs": {
            Path(p).relative_to(path.parent).as_posix() if Path(p).is_relative_to(path.parent) else str(p): {
                "sha256": sha256_file(p),
                "bytes": Path(p).stat().st_size,
            }
            for p in outputs
            if Path(p).resolve() != path.resolve()
        },  # fmt: skip
        **(extra or {}),
    }
    path.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path
