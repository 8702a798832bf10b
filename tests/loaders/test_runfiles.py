"""Run files for submission (seed 002): every validator rule with a broken file, export and the manifest,
and the `rankhouse lanes export` and `rankhouse runs validate` commands."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from clirunner import rankhouse
from golden_warehouses import build_golden
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankhouse.errors import RankhouseError
from rankhouse.runfiles import validate_runs, write_manifest
from rankhouse.studies.lanes.runs import write_ordering, write_orderings
from rankhouse.warehouse import Warehouse

GOOD_A = """\
q1 Q0 d1 1 3.5 run-a
q1 Q0 d2 2 3.5 run-a
q1 Q0 d3 3 1.0 run-a
q2 Q0 d1 1 2.0 run-a
q2 Q0 d4 2 -1.0 run-a
"""
GOOD_B = """\
q1 Q0 d3 1 9 run-b
q1 Q0 d1 2 8 run-b
q1 Q0 d2 3 7 run-b
q2 Q0 d4 1 5 run-b
q2 Q0 d1 2 4 run-b
"""


def files(tmp_path: Path, *texts: str | bytes) -> list[Path]:
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"run{i}.txt"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        paths.append(path)
    return paths


def broken(line: int, new: str) -> str:
    lines = GOOD_A.splitlines(keepends=True)
    lines[line - 1] = new
    return "".join(lines)


def test_good_files_validate_with_ties_allowed(tmp_path):
    assert validate_runs(files(tmp_path, GOOD_A, GOOD_B), r"d[0-9]+") == []


FILE_RULES = [
    (broken(2, "q1 Q0 d2 2 3.5\n"), 2, "expected 6 fields: topic Q0 docno rank score tag"),
    (broken(2, "q1 Q0 d2 2 3.5 run-a extra\n"), 2, "expected 6 fields: topic Q0 docno rank score tag"),
    (broken(2, "q1 Q1 d2 2 3.5 run-a\n"), 2, "the second field must be Q0"),
    (broken(4, "q2 Q0 d1 2 2.0 run-a\n"), 4, "ranks must start at 1 for each topic and go up by 1"),
    (broken(3, "q1 Q0 d3 4 1.0 run-a\n"), 3, "ranks must start at 1 for each topic and go up by 1"),
    (broken(3, "q1 Q0 d3 three 1.0 run-a\n"), 3, "rank is not a whole number"),
    (broken(3, "q1 Q0 d3 3 4.0 run-a\n"), 3, "score increases within the topic"),
    (broken(3, "q1 Q0 d3 3 nan run-a\n"), 3, "score is NaN or infinite"),
    (broken(3, "q1 Q0 d3 3 high run-a\n"), 3, "score is not a number"),
    (broken(3, "q1 Q0 d1 3 1.0 run-a\n"), 3, "duplicate topic-document pair"),
    (broken(3, "q1 Q0 doc-3 3 1.0 run-a\n"), 3, "document id does not match the allowed pattern"),
    (GOOD_A + "q1 Q0 d9 1 0.5 run-a\n", 6, "topic appears again after other topics"),
    (broken(3, "q1 Q0 d3 3 1.0 run-x\n"), 3, "run tag differs from the file's first"),
    (broken(3, "\n"), 3, "blank line"),
    (GOOD_A.encode() + b"q3 Q0 d\xff 1 1.0 run-a\n", 6, "not valid UTF-8 text"),
    ("", 0, "no lines in the file"),
]


@pytest.mark.parametrize(("text", "line", "rule"), FILE_RULES)
def test_each_rule_names_the_file_line_and_rule(tmp_path, text, line, rule):
    path = files(tmp_path, text)[0]
    problems = validate_runs([path], r"d[0-9]+")
    assert problems, rule
    assert (problems[0].path, problems[0].line, problems[0].rule) == (str(path), line, rule)


ACROSS = [
    (GOOD_B.replace("q2", "q3"), "topics differ from"),
    (GOOD_B + "q3 Q0 d1 1 1 run-b\n", "topics differ from"),
    (GOOD_B.replace("q2 Q0 d1 2 4 run-b\n", ""), "rows differ from"),
    (GOOD_B.replace("d4", "d5"), "rows differ from"),
    (GOOD_B.replace("run-b", "run-a"), "run tag also used by another file"),
]


@pytest.mark.parametrize(("other", "rule"), ACROSS)
def test_variants_must_share_topics_and_rows(tmp_path, other, rule):
    paths = files(tmp_path, GOOD_A, other)
    problems = validate_runs(paths)
    assert [(p.path, p.line) for p in problems] == [(str(paths[1]), 0)]
    assert problems[0].rule.startswith(rule)


def test_every_problem_is_reported_not_only_the_first(tmp_path):
    text = broken(2, "q1 Q1 d2 2 3.5 run-a\n").replace("q1 Q0 d3 3 1.0", "q1 Q0 d3 3 9.0")
    assert [(p.line, p.rule) for p in validate_runs(files(tmp_path, text))] == [
        (2, "the second field must be Q0"),
        (3, "score increases within the topic"),
    ]


# -- a plain-Python oracle of the rules, line by line as the seed states them -----------------------------
def whole(text: str) -> int | None:
    """A rank as the loaders read it: a number that is whole (within 2^53), else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else None


def oracle_file(path: Path, pattern: str | None) -> tuple[list[tuple], dict[str, set[str]], str | None]:
    """(problems, documents per topic, first tag) of one file: a loop over its lines."""
    shown, problems, topics, tag = str(path), [], {}, None
    lines = path.read_text().split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        return [(shown, 0, "no lines in the file", "")], topics, tag
    seen, finished, current, last_rank, last_score = {}, set(), None, 0, math.inf
    for number, line in enumerate(lines, start=1):
        content = line.strip(" \t\r")
        fields = re.split(r"[ \t\r]+", content) if content else []
        if not fields:
            problems.append((shown, number, "blank line", ""))
            continue
        if len(fields) != 6:
            problems.append((shown, number, "expected 6 fields: topic Q0 docno rank score tag", f"found {len(fields)}"))
            continue
        topic, q0, docno, rank_text, score_text, line_tag = fields
        if q0 != "Q0":
            problems.append((shown, number, "the second field must be Q0", q0))
        tag = line_tag if tag is None else tag
        if line_tag != tag:
            problems.append((shown, number, "run tag differs from the file's first", f"{line_tag}, not {tag}"))
        if topic != current:
            if topic in finished:
                problems.append((shown, number, "topic appears again after other topics", topic))
            finished.add(current)
            current, last_rank, last_score = topic, 0, math.inf
        rank = whole(rank_text)
        if rank is None:
            problems.append((shown, number, "rank is not a whole number", f"rank {rank_text}"))
        elif rank != last_rank + 1:
            detail = f"rank {rank} after {last_rank}" if last_rank else f"first rank {rank}"
            problems.append((shown, number, "ranks must start at 1 for each topic and go up by 1", detail))
        last_rank = last_rank + 1 if rank is None else rank
        try:
            score = float(score_text)
        except ValueError:
            problems.append((shown, number, "score is not a number", f"score {score_text}"))
        else:
            if not math.isfinite(score):
                problems.append((shown, number, "score is NaN or infinite", f"score {score_text}"))
            elif score > last_score:
                problems.append(
                    (shown, number, "score increases within the topic", f"{score_text} after {last_score!r}")
                )
            else:
                last_score = score
        if (topic, docno) in seen:
            problems.append((shown, number, "duplicate topic-document pair",
                             f"{topic} {docno}, first at line {seen[topic, docno]}"))  # fmt: skip
        else:
            seen[topic, docno] = number
            topics.setdefault(topic, set()).add(docno)
        if pattern is not None and not re.fullmatch(pattern, docno):
            problems.append((shown, number, "document id does not match the allowed pattern",
                             f"{docno!r} against {pattern!r}"))  # fmt: skip
    return problems, topics, tag


def oracle(paths: list[Path], pattern: str | None) -> list[tuple]:
    """Every problem of the files: each file's, then each file's against the first and the earlier tags."""
    parsed = [oracle_file(path, pattern) for path in paths]
    problems = [problem for found, _, _ in parsed for problem in found]
    first, tags = parsed[0][1], {}
    for index, (path, (_, topics, tag)) in enumerate(zip(paths, parsed)):
        if tag is not None:
            if tag in tags and tags[tag] != path:
                problems.append((str(path), 0, "run tag also used by another file", f"{tag} in {tags[tag]}"))
            tags.setdefault(tag, path)
        if index == 0:
            continue
        missing, extra = sorted(set(first) - set(topics)), sorted(set(topics) - set(first))
        if missing or extra:
            problems.append(
                (str(path), 0, f"topics differ from {paths[0]}", f"missing {missing[:5]}, extra {extra[:5]}")
            )
        for topic in sorted(set(first) & set(topics)):
            ours, theirs = topics[topic], first[topic]
            if ours != theirs:
                same = "" if len(ours) != len(theirs) else ", not the same ones"
                problems.append((str(path), 0, f"rows differ from {paths[0]}",
                                 f"topic {topic}: {len(ours)} documents, {len(theirs)} there{same}"))  # fmt: skip
    return problems


TOKENS = [
    ["q1", "q2", "q3"],
    ["Q0", "Q0", "Q0", "Q1"],
    ["d1", "d2", "d3", "d4", "x-1"],
    ["1", "2", "3", "4", "0", "-1", "2.0", "x"],
    ["3", "2", "1", "0.5", "2.5", "nan", "inf", "x"],
    ["a", "a", "b"],
]
GOOD_LINE = st.tuples(*(st.sampled_from(t) for t in TOKENS)).map(" ".join)
ODD_LINE = st.one_of(
    st.sampled_from(["", " ", "\t"]),
    st.lists(st.sampled_from(["q1", "Q0", "d1", "1", "2.5", "a", "#"]), min_size=1, max_size=7).map(" ".join),
    st.tuples(*(st.sampled_from(t) for t in TOKENS)).map("\t  ".join),
)
RUN_FILE = st.builds(lambda lines, newline: "\n".join(lines) + newline,
                     st.lists(st.one_of(GOOD_LINE, GOOD_LINE, GOOD_LINE, ODD_LINE), max_size=12),
                     st.sampled_from(["\n", "\n", ""]))  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(RUN_FILE, min_size=1, max_size=3), pattern=st.sampled_from([None, r"d[0-9]+"]))
def test_the_sql_rules_find_what_the_line_by_line_oracle_finds(tmp_path, texts, pattern):
    paths = files(tmp_path, *texts)
    found = [(p.path, p.line, p.rule, p.detail) for p in validate_runs(paths, pattern)]
    assert found == oracle(paths, pattern)


def test_runs_in_order_with_ties_give_the_oracle_nothing_to_say(tmp_path):
    paths = files(tmp_path, GOOD_A, GOOD_B)
    assert oracle(paths, r"d[0-9]+") == [] == validate_runs(paths, r"d[0-9]+")


def test_the_document_id_pattern_is_re2(tmp_path):
    path = files(tmp_path, GOOD_A.replace("d", "shard_"))[0]
    assert validate_runs([path], r"shard_\S+") == []
    assert [p.line for p in validate_runs([path], r"shard_[12]")] == [3, 5]
    with pytest.raises(RankhouseError, match=r"'\(' is not a regular expression \(RE2 syntax\): missing \)"):
        validate_runs([path], "(")
    with pytest.raises(RankhouseError, match="RE2 syntax"):
        validate_runs([path], r"shard_(?=1)\d")  # lookahead: Python's re has it, RE2 does not


@pytest.fixture(scope="module")
def lanes_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("runfiles")
    with Warehouse(root / "lanes.duckdb") as wh:
        build_golden(wh, "lanes")
    return root / "lanes.duckdb"


def test_orderings_export_as_valid_six_field_files(lanes_db, tmp_path):
    with Warehouse(lanes_db, read_only=True) as wh:
        paths = write_orderings(wh, "tiny_lanes", tmp_path, "tiny")
        ranking = wh.sql("SELECT method, topic, doc_id, rank FROM models.lane_orderings ORDER BY method, topic, rank")
    assert [p.name for p in paths] == ["combo.run", "breadth.run", "narrative.run"]
    assert validate_runs(paths, r"[0-9]+") == []
    for path in paths:
        method = path.stem
        lines = [line.split() for line in path.read_text().splitlines()]
        assert {line[5] for line in lines} == {f"tiny-{method}"}
        assert [(t, d, int(r)) for t, _, d, r, _, _ in lines] == [(t, d, r) for m, t, d, r in ranking if m == method]
        by_topic: dict[str, list[float]] = {}
        for t, _, _, _, score, _ in lines:
            by_topic.setdefault(t, []).append(float(score))
        assert all(s == sorted(s, reverse=True) and len(set(s)) == len(s) for s in by_topic.values())
    assert [line.split()[2] for line in paths[2].read_text().splitlines()] == ["6", "0", "7", "3", "8", "9"]


def test_a_run_tag_is_one_word(lanes_db, tmp_path):
    from rankhouse.errors import RankhouseError

    with Warehouse(lanes_db, read_only=True) as wh, pytest.raises(RankhouseError, match="without whitespace"):
        write_ordering(wh, "tiny_lanes", "combo", tmp_path / "x.run", "two words")


def test_manifest_hashes_inputs_and_outputs(tmp_path):
    inputs = files(tmp_path, GOOD_A, GOOD_B)
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs").mkdir()
    (out / "runs" / "a.run").write_text(GOOD_A)
    manifest = write_manifest(out / "manifest.json", inputs={"a": inputs[0], "b": inputs[1]},
                              outputs=[out / "runs" / "a.run"], extra={"topics": {"q1": {"k": 3}}})  # fmt: skip
    document = json.loads(manifest.read_text())
    digest = hashlib.sha256(GOOD_A.encode()).hexdigest()
    assert document["inputs"]["a"]["sha256"] == digest and document["outputs"]["runs/a.run"]["sha256"] == digest
    assert document["inputs"]["b"]["sha256"] == hashlib.sha256(GOOD_B.encode()).hexdigest()
    assert document["topics"] == {"q1": {"k": 3}}


def test_cli_export_and_validate(lanes_db, tmp_path):
    done = rankhouse("lanes", "export", "breadth", tmp_path / "breadth.run", "--corpus", "tiny_lanes", "--db", lanes_db,
                     "--doc-pattern", "[0-9]+")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "it validates" in done.stderr + done.stdout
    assert [line.split()[2] for line in (tmp_path / "breadth.run").read_text().splitlines()] == ["7", "0", "6", "3",
                                                                                                "8", "9"]  # fmt: skip
    good = files(tmp_path, GOOD_A, GOOD_B)
    done = rankhouse("runs", "validate", *good, "--doc-pattern", "d[0-9]+")
    assert done.returncode == 0, done.stderr
    bad = files(tmp_path, broken(3, "q1 Q0 d3 3 4.0 run-a\n"))
    done = rankhouse("runs", "validate", *bad)
    assert done.returncode == 2
    assert f"{bad[0]}:3: score increases within the topic" in done.stdout
    assert "error: 1 problem in 1 file(s)" in done.stderr
    done = rankhouse("runs", "validate", *good, "--doc-pattern", "d(")
    assert done.returncode == 2 and "RE2 syntax" in done.stderr and "Traceback" not in done.stderr


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=200))
def test_duckdb_writes_a_double_as_pythons_repr(values):
    # the run writers (rankhouse/studies/common.py write_runs) let DuckDB write each score, as
    # CAST(score AS VARCHAR); the recorded run files were written with Python's repr: the same text
    # for any double, float32 cosines cast to double included
    values += [float(np.float32(v)) for v in values if abs(v) < 3e38] + [0.1, 1e16, 1e-5, -0.0, 2.0**53]
    with Warehouse(":memory:") as wh:
        shown = wh.sql("SELECT CAST(x AS VARCHAR) FROM unnest(?::DOUBLE[]) AS t(x)", [values])
    assert [text for (text,) in shown] == [repr(v) for v in values]
