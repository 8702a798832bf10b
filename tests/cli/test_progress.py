"""Progress (issue 16, item 5): the sinks of rankhouse/progress.py unit-tested on a fake terminal and a
plain stream (live lines redrawn in place, `still building` lines, bars only for work over a second,
JSON events), and --json and --quiet on the commands, checked against the warehouse's own record of
what it built (meta.model_runs) and trec_eval's output."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import duckdb
import pytest
from clirunner import error_line, rankhouse_in_process
from conftest import TREC

from rankhouse.paths import STUDIES_DIR
from rankhouse.progress import JsonProgress, Progress, TextProgress
from rankhouse.study import Protocol, Study
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.runner import ModelRun


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def final_line(status: str, model: str, rows: str, seconds: float) -> str:
    return f"  {status:<8} {model:<28} {rows:>15}  {seconds:7.2f} s"


def test_a_building_model_is_a_live_line_on_a_terminal_replaced_by_its_final_line():
    out = Terminal()
    sink = TextProgress(stream=out, live_after=0.05, live_every=0.05)
    sink.model_started("judged_ranking")
    time.sleep(0.4)
    sink.model_finished(ModelRun("judged_ranking", "f", "built", 1234, 0.4))
    text = out.getvalue()
    draws = re.findall(r"\rbuilding judged_ranking \.\.\. (\d+) s\x1b\[K", text)
    assert len(draws) >= 2 and text.count("\n") == 1  # a redraw every 0.05 s for 0.4 s (fewer on a busy machine)
    assert text.endswith("\r\x1b[K" + final_line("built", "judged_ranking", "1,234 rows", 0.4) + "\n")
    sink.model_started("runs")  # a quick one draws no live line at all
    sink.model_finished(ModelRun("runs", "f", "skipped", None, 0.01))
    assert out.getvalue()[len(text) :] == final_line("skipped", "runs", "view", 0.01) + "\n"


def test_off_a_terminal_a_long_model_gets_still_building_lines_and_no_redraw():
    out = io.StringIO()
    sink = TextProgress(stream=out, still_every=0.1)
    sink.model_started("bm25_scores")
    time.sleep(0.6)
    sink.model_finished(ModelRun("bm25_scores", "f", "built", None, 0.45))
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) >= 3  # one every 0.1 s for 0.6 s (fewer on a busy machine)
    assert all(re.fullmatch(r"  still building bm25_scores \(\d+ s\)", line) for line in lines[:-1])
    assert lines[-1] == final_line("built", "bm25_scores", "view", 0.45)


def test_bars_show_only_for_work_over_a_second():
    quick = io.StringIO()
    bar = TextProgress(stream=quick).bar("encoding")
    for done in range(101):
        bar(done, 100)
    assert quick.getvalue() == ""
    slow = io.StringIO()
    bar = TextProgress(stream=slow, bar_after=0).bar("hashing 3 inputs")
    for done in range(0, 1001, 7):
        bar(done, 1000)
    bar(1000, 1000)
    shown = [
        int(m.replace(",", ""))
        for m in re.findall(r"^hashing 3 inputs: ([\d,]+) of 1,000 \(\d+%\)$", slow.getvalue(), re.M)
    ]
    expected = [0] + [next(d for d in range(0, 1001, 7) if d * 10 >= tenth * 1000) for tenth in range(1, 10)]
    assert shown == [*expected, 1000]  # the first step past each tenth, and the end
    terminal = Terminal()
    bar = TextProgress(stream=terminal, bar_after=0).bar("encoding")
    for done in range(11):
        bar(done, 10)
    assert terminal.getvalue().startswith("\rencoding [") and terminal.getvalue().endswith(
        "\r\x1b[Kencoding [" + "#" * 30 + "] 10/10\n"
    )


def test_json_events_parse_with_a_heartbeat_for_a_long_model():
    out = io.StringIO()
    sink = JsonProgress(stream=out, running_every=0.05)
    sink.model_started("paired_bootstrap")
    time.sleep(0.3)
    sink.model_finished(ModelRun("paired_bootstrap", "abc", "built", 7, 0.3))
    sink.say("a note")
    found = [json.loads(line) for line in out.getvalue().splitlines()]
    assert found[0] == {"event": "model_started", "model": "paired_bootstrap"}
    assert {e["event"] for e in found[1:-2]} == {"model_running"} and len(found) >= 5
    assert found[-2] == {"event": "model", "model": "paired_bootstrap", "status": "built", "rows": 7,
                         "seconds": 0.3, "fingerprint": "abc"}  # fmt: skip
    assert found[-1] == {"event": "note", "message": "a note"}


def test_a_studys_inputs_are_hashed_with_one_bar_over_their_bytes():
    calls: list[tuple[int, int]] = []

    class Recorder(Progress):
        def bar(self, label: str):  # noqa: ANN202
            assert label == "hashing 2 inputs"  # the label file (qrels) is not read before the freeze
            return lambda done, total: calls.append((done, total))

    protocol = Protocol.load(STUDIES_DIR / "trec_sample.toml")
    with Warehouse(":memory:") as wh:
        Study(protocol, wh, progress=Recorder()).check_inputs()
    total = sum(item.path.stat().st_size for item in protocol.inputs if not item.is_label)
    assert total == 165806 - 75042  # issue 34: the bar's total was the qrels file's size too
    assert calls[-1] == (total, total) and {t for _, t in calls} == {total}
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def model_runs(db: Path, namespace: str = "default") -> list[tuple[str, str]]:
    with duckdb.connect(str(db.parent / f"{db.stem}.d" / "studies" / f"{namespace}.duckdb"), read_only=True) as con:
        return con.execute("SELECT model, status FROM meta.model_runs ORDER BY started_at").fetchall()


def trec_eval_map() -> str:
    """trec_eval's MAP of results.test, from its expected output."""
    (line,) = [line for line in (TREC / "expected" / "out.test").read_text().splitlines() if line.startswith("map ")]
    return line.split()[-1]


def test_json_progress_of_a_study_run_names_every_model_it_built(tmp_path):
    db = tmp_path / "w.duckdb"
    done = rankhouse_in_process("study", "run", STUDIES_DIR / "trec_sample.toml", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    found = [json.loads(line) for line in done.stderr.splitlines()]  # every line is one JSON object
    built = [(e["model"], e["status"]) for e in found if e["event"] == "model"]
    assert built == model_runs(db, "trec_sample") and {s for _, s in built} == {"built"}
    assert [e["model"] for e in found if e["event"] == "model_started"] == [m for m, _ in built]
    loads = [e for e in found if e["event"] == "load"]
    assert sorted(e["name"] for e in loads) == ["qrels.test", "results.test", "results.trunc"]
    assert any(e["event"] == "note" and e["message"].startswith("froze trec_sample-1") for e in found)
    assert re.search(rf"^AP\s+{trec_eval_map()}\s", done.stdout, re.M), done.stdout  # the results: stdout


def test_quiet_prints_nothing_on_stderr_and_keeps_the_results(tmp_path):
    db = tmp_path / "w.duckdb"
    for args in (("load", "qrels", TREC / "qrels.test"), ("load", "run", TREC / "results.test"),
                 ("run", "-s", "+run_measures")):  # fmt: skip
        done = rankhouse_in_process(*args, "--db", db, "--quiet")
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert {status for _, status in model_runs(db)} == {"built"}  # it did build, silently
    done = rankhouse_in_process("study", "run", STUDIES_DIR / "trec_sample.toml", "--db", tmp_path / "s.duckdb",
                                "--quiet")  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert re.search(rf"^AP\s+{trec_eval_map()}\s", done.stdout, re.M), done.stdout


@pytest.mark.parametrize("command", [("run",), ("study", "prepare", STUDIES_DIR / "trec_sample.toml")])
def test_quiet_and_json_together_are_refused_before_anything_is_opened(tmp_path, command):
    done = rankhouse_in_process(*command, "--db", tmp_path / "w.duckdb", "--quiet", "--json")
    event = json.loads(done.stderr.splitlines()[0])  # --json: the failure is a JSON event too
    assert event["event"] == "error" and "--quiet and --json exclude each other" in event["message"]
    assert (done.returncode, event["status"], len(done.stderr.splitlines())) == (2, 2, 1)
    assert not (tmp_path / "w.duckdb").exists()
    line = error_line(rankhouse_in_process(*command, "--db", tmp_path / "w.duckdb", "--quiet", "--bogus"))
    assert line.startswith("error: no such option: --bogus")  # without --json: the error line
