"""Run files for submission (seed 002): every validator rule with a broken file, export and the manifest,
and the `rankhouse runs export --lanes` and `rankhouse runs validate` commands."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_snapshots import build_lanes

from rankhouse.runfiles import validate_runs, write_manifest, write_ordering, write_orderings
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


@pytest.fixture(scope="module")
def lanes_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("runfiles")
    with Warehouse(root / "lanes.duckdb") as wh:
        build_lanes(wh)
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


def rankhouse(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rankhouse", *map(str, args)], capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def test_cli_export_and_validate(lanes_db, tmp_path):
    done = rankhouse("runs", "export", "breadth", tmp_path / "breadth.run", "--lanes", "tiny_lanes", "--db", lanes_db,
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
