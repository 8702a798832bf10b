"""`rankhouse eval` and `load run` inputs and outputs, run as a user runs them: run names (NAME=PATH,
duplicate names refused), .gz and standard input, unreadable inputs, the output formats and --places."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clirunner import rankhouse_auto, refused
from conftest import TREC, read_qrels, read_run
from oracles import pytrec_per_query

MEASURES = ["AP", "P@10", "nDCG@10"]
FORMATS = ("text", "json", "jsonl", "csv", "markdown", "latex")


def two_runs_named_alike(tmp_path: Path) -> tuple[Path, Path]:
    """d1/run.txt (trec_eval's results.test) and d2/run.txt (its results.trunc): one file name, two runs."""
    first, second = tmp_path / "d1" / "run.txt", tmp_path / "d2" / "run.txt"
    for path, source in ((first, "results.test"), (second, "results.trunc")):
        path.parent.mkdir(parents=True)
        shutil.copy(TREC / source, path)
    return first, second


def test_two_runs_with_one_file_name_are_refused_before_anything_is_loaded(tmp_path):
    first, second = two_runs_named_alike(tmp_path)
    message = (
        f"error: 2 runs would be named 'run.txt': {first} and {second}; "
        f"name each with NAME=PATH, e.g. d1={first} d2={second}"
    )
    refused(rankhouse_auto("eval", TREC / "qrels.test", first, second), message)
    db = tmp_path / "w.duckdb"
    refused(rankhouse_auto("load", "run", first, second, "--db", db), message)
    assert not db.exists()  # refused before the warehouse was opened
    refused(rankhouse_auto("eval", TREC / "qrels.test", first, first), f"{first} is given 2 times")


def test_named_runs_are_each_evaluated_with_their_own_figures(tmp_path):
    first, second = two_runs_named_alike(tmp_path)
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    named = (f"test={first}", f"trunc={second}")
    done = rankhouse_auto("eval", TREC / "qrels.test", *named, *measures, "-q", "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert list(result) == ["test", "trunc"]
    qrels = read_qrels(TREC / "qrels.test")
    for name, path in (("test", first), ("trunc", second)):
        expected = pytrec_per_query(qrels, read_run(path), MEASURES)
        ours = result[name]["per_query"]
        assert set(ours) == set(qrels)  # complete (-c): a qrels query the run missed is there, scoring 0
        for qid in qrels:
            for measure in MEASURES:
                value = expected[qid][measure] if qid in expected else 0.0
                assert abs(ours[qid][measure] - value) < 1e-9, (name, qid, measure)
        for measure in MEASURES:
            mean = sum(v[measure] for v in expected.values()) / len(qrels)
            assert abs(result[name]["all"][measure] - mean) < 1e-9, (name, measure)
    assert result["test"]["all"] != result["trunc"]["all"]
    text = rankhouse_auto("eval", TREC / "qrels.test", f"test={first}", f"trunc={second}", "-m", "map").stdout
    assert text == "test\tmap                   \tall\t0.1785\ntrunc\tmap                   \tall\t0.1016\n"
    # An existing file whose name has an `=` is a path (named as itself); `./` makes any such name a path.
    shutil.copy(first, tmp_path / "k1=0.9.run")
    named = rankhouse_auto("eval", TREC / "qrels.test", "k1=0.9.run", "-m", "map", "--format", "json", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert list(json.loads(named.stdout)) == ["k1=0.9.run"]
    refused(
        rankhouse_auto("eval", TREC / "qrels.test", "./k1=1.2.run", cwd=tmp_path), "error: ./k1=1.2.run: no such file"
    )


def test_load_run_replacing_a_run_says_what_it_replaced(tmp_path):
    first, second = two_runs_named_alike(tmp_path)
    db = tmp_path / "w.duckdb"
    loaded = rankhouse_auto("load", "run", first, "--db", db)
    assert loaded.stderr == f"{first}: loaded 1500 rows into raw.runs as run.txt\n"
    sha1, sha2 = (hashlib.sha256(p.read_bytes()).hexdigest() for p in (first, second))
    replaced = rankhouse_auto("load", "run", second, "--db", db)
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stderr == (
        f"{second}: loaded 584 rows into raw.runs as run.txt, replacing those loaded from {first} "
        f"(sha256 {sha1[:12]}..., now {sha2[:12]}...)\n"
    )
    again = rankhouse_auto("load", "run", second, "--db", db)
    assert "already loaded as run.txt in raw.runs (same bytes)" in again.stderr
    # eval on a warehouse file says so too, without -v
    evaluated = rankhouse_auto("eval", TREC / "qrels.test", first, "-m", "map", "--db", db)
    assert evaluated.stdout == "map                   \tall\t0.1785\n"
    assert f"{first}: loaded 1500 rows into raw.runs as run.txt, replacing those loaded from {second}" in (
        evaluated.stderr
    )


def test_gz_files_and_standard_input_read_as_the_plain_files(tmp_path):
    run_gz, qrels_gz = tmp_path / "results.test.gz", tmp_path / "qrels.test.gz"
    run_gz.write_bytes(gzip.compress((TREC / "results.test").read_bytes()))
    qrels_gz.write_bytes(gzip.compress((TREC / "qrels.test").read_bytes()))
    plain = rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", "-q")
    assert plain.returncode == 0, plain.stderr
    run_text = (TREC / "results.test").read_text()
    for args, stdin in (
        ((TREC / "qrels.test", run_gz), None),
        ((qrels_gz, run_gz), None),
        ((TREC / "qrels.test", "-"), run_text),
        ((qrels_gz, "-"), run_text),
        (("-", run_gz), (TREC / "qrels.test").read_text()),
        ((TREC / "qrels.test", "-"), run_gz.read_bytes()),  # gzip on standard input, by its magic number
    ):
        done = rankhouse_auto("eval", *args, "-q", stdin=stdin)
        assert done.returncode == 0, (args, done.stderr)
        assert done.stdout == plain.stdout, args
    as_json = rankhouse_auto("eval", TREC / "qrels.test", run_gz, "--format", "json").stdout
    assert as_json == rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", "--format", "json").stdout
    # The SHA-256 recorded is of the bytes as given: the compressed ones for a .gz
    db = tmp_path / "w.duckdb"
    assert rankhouse_auto("load", "run", run_gz, "--db", db).returncode == 0
    assert rankhouse_auto("load", "run", "piped=-", "--db", db, stdin=run_text).returncode == 0
    sources = rankhouse_auto("sources", "--db", db).stdout
    assert f"results.test  1500  {hashlib.sha256(run_gz.read_bytes()).hexdigest()}" in sources
    assert f"piped         1500  {hashlib.sha256(run_text.encode()).hexdigest()}" in sources
    assert "<stdin>" in sources


def test_inputs_that_cannot_be_read_are_named(tmp_path):
    qrels = TREC / "qrels.test"
    (tmp_path / "adir").mkdir()
    refused(rankhouse_auto("eval", qrels, tmp_path / "adir"), f"error: {tmp_path / 'adir'}: is a directory, not a file")
    refused(rankhouse_auto("eval", qrels, tmp_path / "nope.run"), f"error: {tmp_path / 'nope.run'}: no such file")
    refused(rankhouse_auto("eval", tmp_path / "nope.qrels", TREC / "results.test"), "nope.qrels: no such file")
    fake = tmp_path / "fake.run.gz"
    shutil.copy(TREC / "results.test", fake)
    refused(rankhouse_auto("eval", qrels, fake), f"error: {fake}: its name ends in .gz, but it is not gzip-compressed")
    cut = tmp_path / "cut.run.gz"
    cut.write_bytes(gzip.compress((TREC / "results.test").read_bytes())[:-20])
    refused(rankhouse_auto("eval", qrels, cut), f"error: {cut}: a corrupt or truncated gzip file")
    refused(rankhouse_auto("eval", qrels, "-", stdin=""), "error: <stdin>: standard input is empty")
    refused(rankhouse_auto("eval", "-", "-", stdin="x"), "standard input can be read once: at most one input")
    bad = rankhouse_auto("eval", qrels, "-", stdin="q1 Q0 d1 1 1.0 tag\nq1 Q0 d2 1 NaN tag\n")
    refused(bad, "error: <stdin>:2: score is NaN or infinite")


def outputs(tmp_path: Path, *extra: str, formats: tuple[str, ...] = FORMATS) -> dict[str, str]:
    """eval's stdout in `formats`, for two named runs and four measures."""
    first, second = two_runs_named_alike(tmp_path)
    result = {}
    for fmt in formats:
        done = rankhouse_auto("eval", TREC / "qrels.test", f"test={first}", f"trunc={second}",
                         "-m", "map,P.10,num_ret,ndcg_cut.10", "--format", fmt, *extra)  # fmt: skip
        assert done.returncode == 0, (fmt, done.stderr)
        result[fmt] = done.stdout
    return result


def rows_of(fmt: str, out: str) -> dict[tuple[str, str, str], str | float]:
    """{(run, measure, query): value} from one machine-readable format."""
    if fmt == "text":
        return {tuple(f.strip() for f in line.split("\t")[:3]): line.split("\t")[3] for line in out.splitlines()}
    if fmt == "json":
        return {(run, m, q): v for run, entry in json.loads(out).items()
                for q, values in [("all", entry["all"]), *entry.get("per_query", {}).items()]
                for m, v in values.items()}  # fmt: skip
    if fmt == "jsonl":
        return {(r["run"], r["measure"], r["query"]): r["value"] for r in map(json.loads, out.splitlines())}
    reader = csv.reader(io.StringIO(out))
    assert next(reader) == ["run", "measure", "query", "value"]
    return {(run, m, q): v for run, m, q, v in reader}


def table_of(fmt: str, out: str) -> dict[tuple[str, str, str], str]:
    """{(run, measure, "all"): value} from a markdown or LaTeX table, its shape checked on the way."""
    lines = out.splitlines()
    if fmt == "markdown":
        assert all(line.startswith("| ") and line.endswith(" |") for line in lines)
        cells = [line[2:-2].split(" | ") for line in lines]
        assert cells[1] == ["---"] + ["---:"] * 4
        del cells[1]
    else:
        assert lines[:2] == [r"\begin{tabular}{lrrrr}", r"\toprule"]
        assert lines[3] == r"\midrule" and lines[-2:] == [r"\bottomrule", r"\end{tabular}"]
        body = [lines[2], *lines[4:-2]]
        assert all(line.endswith(r" \\") for line in body)
        cells = [line[: -len(r" \\")].split(" & ") for line in body]
        cells[0] = [c.replace(r"\_", "_") for c in cells[0]]
    assert {len(row) for row in cells} == {5}
    header, *rows = cells
    assert header == ["run", "map", "P_10", "num_ret", "ndcg_cut_10"] and [r[0] for r in rows] == ["test", "trunc"]
    return {(row[0], m, "all"): v for row in rows for m, v in zip(header[1:], row[1:])}


def same_numbers(found: dict, expected: dict, places: int = 4) -> None:
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        value = float(value)
        assert f"{float(found[key]):.{places}f}" == f"{value:.{places}f}", key


def test_every_format_parses_and_carries_the_same_numbers(tmp_path):
    out = outputs(tmp_path)
    text = rows_of("text", out["text"])
    assert len(text) == 8 and text[("trunc", "num_ret", "all")] == "584"
    exact = rows_of("json", out["json"])
    assert exact[("test", "num_ret", "all")] == 1500  # a count is a whole number
    assert rows_of("jsonl", out["jsonl"]) == exact
    assert {k: float(v) for k, v in rows_of("csv", out["csv"]).items()} == exact  # every digit, as json
    same_numbers(exact, text)
    for fmt in ("markdown", "latex"):
        same_numbers(table_of(fmt, out[fmt]), text)
    assert out["jsonl"].count("\n") == 8 and all(line.startswith("{") for line in out["jsonl"].splitlines())


def test_per_query_rows_in_every_format_that_has_them(tmp_path):
    out = outputs(tmp_path, "-q", formats=FORMATS[:4])
    text = rows_of("text", out["text"])
    exact = rows_of("json", out["json"])
    queries = {run: {q for r, _, q in exact if r == run} for run in ("test", "trunc")}
    assert queries["test"] == queries["trunc"] == {"301", "302", "303", "all"}  # trunc misses 302: 0 (-c)
    assert len(text) == len(exact) == 2 * 4 * 4
    assert rows_of("jsonl", out["jsonl"]) == exact
    assert {k: float(v) for k, v in rows_of("csv", out["csv"]).items()} == exact
    same_numbers(exact, text)
    jsonl = [json.loads(line) for line in out["jsonl"].splitlines()]
    assert [r["query"] for r in jsonl if r["run"] == "trunc"][-4:] == ["all"] * 4  # each run's all rows last
    for fmt in ("markdown", "latex"):
        done = rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", "-q", "--format", fmt)
        refused(done, f"error: a {fmt} table has the `all` rows only: -q/--per-query needs --format text, json, jsonl")


def test_places_sets_the_digits_after_the_point(tmp_path):
    exact = rows_of("json", outputs(tmp_path, formats=("json",))["json"])
    six = outputs(tmp_path / "six", "--places", "6", formats=("text", "json", "csv"))
    text = rows_of("text", six["text"])
    assert text[("test", "map", "all")] == f"{exact[('test', 'map', 'all')]:.6f}" == "0.178545"
    assert text[("test", "num_ret", "all")] == "1500"
    same_numbers(rows_of("csv", six["csv"]), text, 6)
    assert all(len(v.split(".")[1]) == 6 for k, v in rows_of("csv", six["csv"]).items() if k[1] != "num_ret")
    assert rows_of("json", six["json"]) == {k: round(v, 6) if isinstance(v, float) else v for k, v in exact.items()}
    zero = rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", "-m", "map,P.10", "--places", "0").stdout
    assert zero == "map                   \tall\t0\nP_10                  \tall\t0\n"
    four = rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", "--places", "4").stdout
    assert four == (TREC / "expected" / "out.test").read_text()  # trec_eval's own default
    for bad in ("18", "x", "1_0"):
        refused(rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", "--places", bad),
                f"error: --places must be a whole number from 0 to 17, not {bad!r}")  # fmt: skip


def unjudged_run(path: Path, comment: bool = False) -> Path:
    """trec_eval's results.test with every qid renamed (x401 ...), so that no query has qrels; with a
    comment line first, the general reader loads it instead of the fast one."""
    lines = [f"x{line}" for line in (TREC / "results.test").read_text().splitlines(keepends=True)]
    path.write_text(("# renamed queries\n" if comment else "") + "".join(lines))
    return path


def test_without_complete_a_run_with_no_judged_query_is_refused_by_name(tmp_path):
    fast, general = unjudged_run(tmp_path / "fast.run"), unjudged_run(tmp_path / "general.run", comment=True)
    done = rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", fast, general, "--no-complete")
    refused(done, "no query of run fast.run, general.run has qrels: nothing to evaluate (wrong qrels file?)")
    assert rankhouse_auto("eval", TREC / "qrels.test", TREC / "results.test", "--no-complete").returncode == 0
    judged = rankhouse_auto("eval", TREC / "qrels.test", fast, "-m", "map")  # complete (-c): every qrels query scores 0
    assert judged.returncode == 0 and judged.stdout == "map                   \tall\t0.0000\n", judged.stderr


def test_the_judged_query_check_reads_the_lines_of_a_run_without_blocks(tmp_path):
    """A run loaded without raw.run_blocks rows (an older rankhouse) is checked from its lines."""
    from rankhouse.errors import RankhouseError
    from rankhouse.evaluation import _require_judged_queries
    from rankhouse.loaders import load_qrels, load_run
    from rankhouse.warehouse import Warehouse

    with Warehouse(":memory:") as wh:
        load_qrels(wh, TREC / "qrels.test")
        load_run(wh, unjudged_run(tmp_path / "x.run"), "x")
        load_run(wh, TREC / "results.test", "judged")
        wh.sql("DELETE FROM raw.run_blocks")
        wh.open_gate()
        _require_judged_queries(wh, ["judged"])
        with pytest.raises(RankhouseError, match="no query of run x has qrels"):
            _require_judged_queries(wh, ["judged", "x"])


def test_evaluating_plain_files_never_imports_pandas(tmp_path):
    """The loaders build and read Arrow arrays through their buffers: pa.array and to_numpy import pandas
    on their first call, time every eval spent before (the fast reader's line numbers, the query blocks)."""
    code = (
        "import sys\n"
        "from rankhouse.evaluation import evaluate\n"
        "from rankhouse.warehouse import Warehouse\n"
        "with Warehouse(':memory:') as wh:\n"
        f"    result = evaluate(wh, {str(TREC / 'qrels.test')!r}, [{str(TREC / 'results.test')!r}], ['AP'])\n"
        "print(result.summary, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert done.stdout.rstrip().endswith("False"), done.stdout + done.stderr
    assert "'AP': 0.1785" in done.stdout


def test_relstring_is_a_string_per_query_in_every_format():
    """trec_eval's relstring: per query only (no `all` row), quoted in text as trec_eval prints it, a plain
    string in json and csv, left out of the table formats; alone, it prints nothing without -q."""
    qrels, run_file = TREC / "qrels.test", TREC / "results.test"
    expected = (TREC / "expected" / "out.test.aq").read_text().splitlines()
    lines = rankhouse_auto("eval", qrels, run_file, "-m", "relstring", "-q", "--no-complete").stdout.splitlines()
    assert lines == [line for line in expected if line.startswith("relstring ")]
    assert rankhouse_auto("eval", qrels, run_file, "-m", "relstring").stdout == ""
    as_json = json.loads(
        rankhouse_auto("eval", qrels, run_file, "-m", "relstring.5,map", "-q", "--format", "json").stdout
    )
    per_query = as_json["results.test"]["per_query"]["302"]
    assert per_query == {"relstring_5": "11011", "map": pytest.approx(0.4175, abs=5e-5)}
    assert list(as_json["results.test"]["all"]) == ["map"]
    table = rankhouse_auto("eval", qrels, run_file, "-m", "relstring.5,map", "--format", "markdown").stdout
    assert table.splitlines()[0] == "| run | map |"
