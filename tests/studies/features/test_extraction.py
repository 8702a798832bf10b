"""Seed 004's extraction store and providers (issue 15, section 2): the schema loader's rules, the http
provider against a real loopback server with scripted faults (tests/llm_server.py), the cost ceiling,
stops and resumption (also after a SIGKILL of `python -m rankhouse features extract`), the receipts
against the server's own log, and the minilm stand-in's rule against numpy. Corpora are a few dozen
BANKING77 messages; values and costs are recomputed here from the server's answers and log."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import signal
import subprocess
import sys
import time
import tomllib
from decimal import ROUND_HALF_EVEN, Decimal

import duckdb
import numpy as np
import pytest
from clirunner import rankhouse
from conftest import FIXTURES
from llm_server import FakeLLM, feature_value, flags_of

from rankhouse.cli import run as cli
from rankhouse.endpoint import Settings
from rankhouse.errors import AuditError, InputError, RankhouseError
from rankhouse.loaders import LOADERS
from rankhouse.paths import ROOT
from rankhouse.progress import SILENT, JsonProgress, Meter
from rankhouse.studies.features.extraction.run import extract
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

SCHEMA = FIXTURES / "features" / "small.schema.toml"
FEATURES = [f["name"] for f in tomllib.loads(SCHEMA.read_text())["feature"]]
CORPUS = "c"
OPTIONS = {"corpus": CORPUS, "schema": "small", "provider": "http"}
PARAMS = {"corpus": CORPUS, "schema": "small", "provider": "http"}
KEY = "sk-test-secret-0123456789"
PRICE_IN, PRICE_OUT = 2000.0, 8000.0  # USD per million tokens: a call costs about a dollar
FAST = Settings(concurrency=4, rate=1000, retries=3, timeout=2, backoff=0.01, max_cost=1e6)


# -- fixtures ---------------------------------------------------------------------------------------------
def _messages(name: str, start: int, count: int, seen: set[str]) -> list[str]:
    texts = []
    with (ROOT / "data" / "banking77" / name).open(newline="") as handle:
        for row in list(csv.DictReader(handle))[start:]:
            if row["text"] not in seen and len(texts) < count:
                seen.add(row["text"])
                texts.append(row["text"])
    return texts


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """30 training and 10 test messages of BANKING77, every text distinct (the server counts by text),
    as labelled CSV files, and a protocol that extracts them with the http provider."""
    root = tmp_path_factory.mktemp("extraction")
    seen: set[str] = set()
    splits = {"train": _messages("train.csv", 0, 30, seen), "test": _messages("test.csv", 0, 10, seen)}
    for split, texts in splits.items():
        with (root / f"{split}.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["text", "category"])
            writer.writerows([t, "x"] for t in texts)
    sha = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "train.csv", root / "test.csv", SCHEMA)}
    (root / "study.toml").write_text(f"""
[study]
name = "extraction_test"
[inputs.train_texts]
path = "train.csv"
sha256 = "{sha[root / "train.csv"]}"
loader = "csv.documents"
name = "{CORPUS}"
[inputs.test_texts]
path = "test.csv"
sha256 = "{sha[root / "test.csv"]}"
loader = "csv.queries"
name = "{CORPUS}"
[inputs.schema]
path = "{SCHEMA}"
sha256 = "{sha[SCHEMA]}"
loader = "features.schema"
name = "small"
[generate.features]
kind = "feature_extraction"
corpus = "{CORPUS}"
schema = "small"
provider = "http"
[parameters]
corpus = "{CORPUS}"
schema = "small"
provider = "http"
[stages]
prepare = "+feature_coverage +extraction_receipts"
evaluate = "+feature_coverage"
""")
    texts = {(split, i): text for split, items in splits.items() for i, text in enumerate(items)}
    return type("Corpus", (), {"root": root, "splits": splits, "texts": texts, "protocol": root / "study.toml"})


def loaded(corpus) -> Warehouse:  # noqa: ANN001
    """A fresh in-memory warehouse with the corpus's messages and the schema loaded."""
    wh = Warehouse(":memory:")
    LOADERS["csv.documents"].load(wh, corpus.root / "train.csv", CORPUS)
    LOADERS["csv.queries"].load(wh, corpus.root / "test.csv", CORPUS)
    LOADERS["features.schema"].load(wh, SCHEMA, "small")
    return wh


def endpoint_env(server: FakeLLM, prices: bool = True) -> dict[str, str]:
    env = {"RANKHOUSE_LLM_URL": server.url, "RANKHOUSE_LLM_MODEL": "asked-model", "RANKHOUSE_LLM_KEY": KEY}
    chosen = (PRICE_IN, PRICE_OUT) if prices else (0, 0)
    return env | {"RANKHOUSE_LLM_PRICE_INPUT": str(chosen[0]), "RANKHOUSE_LLM_PRICE_OUTPUT": str(chosen[1])}


NO_SMOKE = "the tests' loopback server: the smoke batch gate is tested on its own"


def http_extract(wh: Warehouse, settings: Settings = FAST, kind: str = "feature_extraction", smoke=None,  # noqa: ANN001, ANN201
                 no_smoke: str | None = NO_SMOKE):  # fmt: skip
    return extract(wh, kind, OPTIONS, settings, lambda message: None, lambda: None, smoke, no_smoke=no_smoke)


def calls(wh: Warehouse, where: str = "true") -> list[dict]:
    columns, rows = wh.columns(f"SELECT * FROM raw.extraction_calls WHERE {where} ORDER BY split, row_index, attempt")
    return [dict(zip(columns, row, strict=True)) for row in rows]


def stored_values(wh: Warehouse) -> dict[tuple[str, int, str], float]:
    rows = wh.sql("SELECT split, row_index, feature, value FROM raw.feature_values")
    return {(s, r, f): v for s, r, f, v in rows}


def three_decimals(value: float) -> float:
    """The oracle's rounding: the decimal value of the double, to 3 places, half to even."""
    return float(Decimal(value).quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN))


def estimated_cost(entry: dict) -> float:
    """What an attempt costs by the issue's rule, from the server's log entry alone."""
    if entry["usage"]:
        return (entry["usage"]["prompt_tokens"] * PRICE_IN + entry["usage"]["completion_tokens"] * PRICE_OUT) / 1e6
    return math.ceil(entry["prompt_chars"] / 4) * PRICE_IN / 1e6


def build(wh: Warehouse, selection: str, params: dict = PARAMS) -> None:
    project = Project.load(params=params)
    Runner(wh, project, params).run(project.select(selection))


# -- the schema loader ----------------------------------------------------------------------------------
def test_the_schema_loads_in_file_order_keyed_by_its_sha256(wh):
    result = LOADERS["features.schema"].load(wh, SCHEMA)
    spec = tomllib.loads(SCHEMA.read_text())
    expected = [("small", hashlib.sha256(SCHEMA.read_bytes()).hexdigest(), i + 1, f["name"], f["family"],
                 f["question"]) for i, f in enumerate(spec["feature"])]  # fmt: skip
    assert wh.sql("SELECT * FROM raw.feature_schema ORDER BY position") == expected
    assert (result.name, result.rows, result.status) == ("small", len(expected), "loaded")
    assert LOADERS["features.schema"].load(wh, SCHEMA).status == "unchanged"
    assert LOADERS["features.schema"].labels is False


def test_a_bom_is_stripped_and_the_key_is_the_files_bytes(wh, tmp_path):
    path = tmp_path / "bom.schema.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SCHEMA.read_bytes())
    LOADERS["features.schema"].load(wh, SCHEMA, "plain")
    LOADERS["features.schema"].load(wh, path, "bom")
    rows = {name: wh.sql("SELECT schema_sha256, position, feature, family, question FROM raw.feature_schema "
                         "WHERE schema = ? ORDER BY position", [name]) for name in ("plain", "bom")}  # fmt: skip
    assert [r[1:] for r in rows["bom"]] == [r[1:] for r in rows["plain"]]
    assert {r[0] for r in rows["bom"]} == {hashlib.sha256(path.read_bytes()).hexdigest()}


GOOD = SCHEMA.read_text()
FIRST_FEATURE = GOOD.index("[[feature]]")
FEATURE_LINE = GOOD[:FIRST_FEATURE].count("\n") + 1  # the line of the first [[feature]]
SCHEMA_LINE = GOOD[: GOOD.index("[schema]")].count("\n") + 1
SECOND_LINE = GOOD[: GOOD.index("[[feature]]", FIRST_FEATURE + 1)].count("\n") + 1
BAD_SCHEMAS = [
    (GOOD.replace('name = "card_pin"', 'name = "card_delivery"'), SECOND_LINE, "feature name given twice"),
    (GOOD.replace('family = "cards"', 'family = "loans"', 1), FEATURE_LINE, "unknown family 'loans'"),
    (GOOD.replace('question = "Is the message about when', 'question = "  "\nx = "', 1), FEATURE_LINE,
     "[[feature]] has an unknown key 'x'"),
    (GOOD.replace("question = \"Is the message about a card's PIN code?\"", 'question = " "'), SECOND_LINE,
     "the question of feature card_pin must be a non-empty string"),
    (GOOD.replace('name = "card_pin"', 'name = "Card-PIN"'), SECOND_LINE, "a feature name matches [a-z][a-z0-9_]*"),
    (GOOD[:FIRST_FEATURE], SCHEMA_LINE, "no [[feature]] in the file"),
    (GOOD.replace('families = ["cards", "transfers", "problems"]', 'families = ["cards", "cards"]'), SCHEMA_LINE,
     "a family is listed twice"),
    (GOOD.replace("[schema]", "[schema]\nname2 = 1"), SCHEMA_LINE, "[schema] has an unknown key 'name2'"),
    (GOOD + "\n[[feature]]\nname = \"x\"\n", GOOD.count("\n") + 2, "[[feature]] lacks family"),
    (GOOD.replace("[[feature]]", "[[feature]", 1), FEATURE_LINE, "not valid TOML"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "rule"), BAD_SCHEMAS)
def test_a_bad_schema_names_the_file_line_and_rule_and_changes_nothing(wh, tmp_path, text, line, rule):
    LOADERS["features.schema"].load(wh, SCHEMA, "small")
    before = wh.sql("SELECT * FROM raw.feature_schema ORDER BY ALL"), wh.sql("SELECT * FROM meta.sources ORDER BY ALL")
    path = tmp_path / "bad.schema.toml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        LOADERS["features.schema"].load(wh, path, "small")
    assert (err.value.path, err.value.line) == (str(path), line)
    assert err.value.rule.startswith(rule)
    assert (wh.sql("SELECT * FROM raw.feature_schema ORDER BY ALL"),
            wh.sql("SELECT * FROM meta.sources ORDER BY ALL")) == before  # fmt: skip


# -- the http provider: faults, retries, Retry-After, rounding, receipts ---------------------------------
FAULTS = {  # (split, row) -> faults of its first requests, and the statuses they are recorded as
    ("train", 0): (["429:0.4"], ["http_429", "ok"]),
    ("train", 1): (["500", "503:0.2"], ["http_5xx", "http_5xx", "ok"]),
    ("train", 2): (["malformed"], ["malformed", "ok"]),
    ("train", 3): (["broken"], ["malformed", "ok"]),
    ("train", 4): (["wrong_types"], ["invalid", "ok"]),
    ("train", 5): (["missing"], ["invalid", "ok"]),
    ("test", 0): (["range"], ["invalid", "ok"]),
    ("test", 1): (["hang:1.5"], ["timeout", "ok"]),
    ("test", 2): (["slow:0.3"], ["ok"]),
}


@pytest.fixture(scope="module")
def faulted(corpus):
    """One extraction of the corpus through a slowish server that fails some requests on purpose."""
    with FakeLLM(delay=0.02, key=KEY) as server:
        with pytest.MonkeyPatch.context() as patch:
            for name, value in endpoint_env(server).items():
                patch.setenv(name, value)
            for key, (faults, _) in FAULTS.items():
                server.faults[corpus.texts[key]] = faults
            wh = loaded(corpus)
            settings = Settings(concurrency=4, rate=1000, retries=3, timeout=0.6, backoff=0.01, max_cost=1e6)
            result = http_extract(wh, settings)
        yield type("Faulted", (), {"wh": wh, "server": server, "result": result, "log": list(server.log)})
        wh.close()


def test_every_fault_is_retried_and_recorded_as_its_status(faulted, corpus):
    assert faulted.result.missing is None
    assert faulted.result.complete == faulted.result.total == len(corpus.texts)
    for (split, row), (_, statuses) in FAULTS.items():
        recorded = calls(faulted.wh, f"split = '{split}' AND row_index = {row}")
        assert [c["status"] for c in recorded] == statuses
        assert [c["attempt"] for c in recorded] == list(range(1, len(statuses) + 1))
        assert [c["possibly_charged"] for c in recorded] == [s != "ok" for s in statuses]
    others = [c for c in calls(faulted.wh) if (c["split"], c["row_index"]) not in FAULTS]
    assert {c["status"] for c in others} == {"ok"} and len(others) == len(corpus.texts) - len(FAULTS)
    ok = calls(faulted.wh, "status = 'ok'")
    assert {c["model_id"] for c in ok} == {"fake-model-2026-01"}  # the response's model, not the one asked for
    assert {c["extractor"] for c in ok} == {"http:asked-model"}


def test_values_are_the_servers_answers_rounded_to_thousandths(faulted, corpus):
    expected = {(s, r, f): three_decimals(feature_value(text, f)) for (s, r), text in corpus.texts.items()
                for f in FEATURES}  # fmt: skip
    stored = stored_values(faulted.wh)
    assert stored == expected
    assert any(feature_value(corpus.texts[k[:2]], k[2]) != v for k, v in stored.items())  # rounding happened
    assert all(round(v * 1000) == v * 1000 for v in stored.values())


def test_retry_after_is_honoured(faulted, corpus):
    for key, wait_for in ((("train", 0), 0.4), (("train", 1), 0.2)):
        entries = [e for e in faulted.log if e["text"] == corpus.texts[key]]
        last_failure = entries[-2]
        assert last_failure["fault"].endswith(f":{wait_for:g}")
        assert entries[-1]["arrived"] - last_failure["answered"] >= wait_for - 0.01


def test_a_failed_attempt_is_charged_at_its_prompts_estimate(faulted, corpus):
    """Failed attempts: usage when the response had one, else ceil(characters / 4) at the input price."""
    by_text = {}
    for entry in faulted.log:
        by_text.setdefault(entry["text"], []).append(entry)
    for (split, row), text in corpus.texts.items():
        recorded = calls(faulted.wh, f"split = '{split}' AND row_index = {row}")
        assert [c["cost_usd"] for c in recorded] == pytest.approx([estimated_cost(e) for e in by_text[text]],
                                                                  rel=1e-12)  # fmt: skip
        usage = [e["usage"] for e in by_text[text]]
        assert [c["prompt_tokens"] for c in recorded] == [u and u["prompt_tokens"] for u in usage]


def test_receipts_match_the_servers_log(faulted, corpus):
    build(faulted.wh, "+extraction_receipts")
    columns, rows = faulted.wh.columns("SELECT * FROM models.extraction_receipts")
    receipts = {row[1]: dict(zip(columns, row, strict=True)) for row in rows}
    statuses = {429: "http_429", 500: "http_5xx", 503: "http_5xx"}
    by_fault = {"malformed": "malformed", "broken": "malformed", "wrong_types": "invalid", "missing": "invalid",
                "range": "invalid", "slow": "ok", "ok": "ok", "hang": "timeout"}  # fmt: skip
    for split in ("train", "test", "all"):
        texts = {t for (s, _), t in corpus.texts.items() if split in (s, "all")}
        log = [e for e in faulted.log if e["text"] in texts]
        kinds = []
        for entry in log:
            fault = (entry["fault"] or "ok").split(":")[0]
            kinds.append(by_fault.get(fault) or statuses[entry["status"]])
        got = receipts[split]
        assert got["calls"] == len(log)
        for status in ("ok", "http_429", "http_5xx", "http_4xx", "timeout", "connection", "malformed", "invalid"):
            assert got[status] == kinds.count(status), status
        assert got["prompt_tokens"] == sum(e["usage"]["prompt_tokens"] for e in log if e["usage"])
        assert got["completion_tokens"] == sum(e["usage"]["completion_tokens"] for e in log if e["usage"])
        assert got["cost_usd"] == pytest.approx(sum(estimated_cost(e) for e in log), rel=1e-12)
        charged = [estimated_cost(e) for e, kind in zip(log, kinds, strict=True) if kind != "ok"]
        assert got["possibly_charged_usd"] == pytest.approx(sum(charged), rel=1e-12)
        latencies = [c["latency_seconds"] for c in calls(faulted.wh) if split in (c["split"], "all")]
        for q in (50, 90, 99):
            assert got[f"latency_p{q}"] == pytest.approx(np.percentile(latencies, q), rel=1e-12)
        assert got["latency_p50"] >= faulted.server.delay
        assert got["model_ids"] == "fake-model-2026-01" and got["extractors"] == "http:asked-model"
        expected = len(texts)
        assert (got["expected"], got["complete"], got["missing"]) == (expected, expected, 0)
        span = max(e["answered"] or e["arrived"] for e in log) - min(e["arrived"] for e in log)
        assert got["wall_seconds"] == pytest.approx(span, abs=0.3)
        assert 0 < got["busy_seconds"] <= got["wall_seconds"] + 1e-9


def test_receipts_command_prints_the_same_receipts(faulted, corpus, tmp_path, capsys):
    """`rankhouse features receipts --format json` on a file warehouse holding the same store."""
    db = tmp_path / "r.duckdb"
    with Warehouse(db) as wh, wh.writing_inputs():
        for table in ("raw.documents", "raw.queries", "raw.feature_schema", "raw.extraction_calls",
                      "raw.feature_values"):  # fmt: skip
            wh.con.register("rows", faulted.wh.con.sql(f"SELECT * FROM {table}").to_arrow_table())
            wh.sql(f"INSERT INTO {table} SELECT * FROM rows")
            wh.con.unregister("rows")
    assert cli(["features", "receipts", str(corpus.protocol), "--db", str(db), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["splits"]["all"]["calls"] == len(faulted.log)
    assert shown["splits"]["test"]["missing"] == 0 and shown["provider"] == "http"


# -- bounds: concurrency, start rate, cost ceiling, stops -----------------------------------------------
def test_concurrency_never_exceeds_the_bound(corpus, monkeypatch):
    with FakeLLM(delay=0.25) as server:
        for name, value in endpoint_env(server, prices=False).items():
            monkeypatch.setenv(name, value)
        with loaded(corpus) as wh:
            result = http_extract(wh, Settings(concurrency=3, rate=1000, retries=1, timeout=5, backoff=0.01),
                                  smoke=12)  # fmt: skip
        assert server.max_in_flight == 3  # reached, and never more
        assert len(server.log) == 12 and result.complete == 12


def test_the_start_rate_is_respected(corpus, monkeypatch):
    rate = 20.0
    with FakeLLM() as server:
        for name, value in endpoint_env(server, prices=False).items():
            monkeypatch.setenv(name, value)
        with loaded(corpus) as wh:
            http_extract(wh, Settings(concurrency=8, rate=rate, retries=1, timeout=5), smoke=16)
        starts = sorted(e["arrived"] for e in server.log)
    assert len(starts) == 16
    # the 16 starts span at least 15 / rate: the limiter spaces the starts it makes; their arrival at the
    # server may bunch after a delay (a loaded machine's scheduling), so only the whole span is checked,
    # less 100 ms of such delay (a limiter that did not space them would take a few ms for all 16)
    assert starts[-1] - starts[0] >= 15 / rate - 0.1


def test_the_cost_ceiling_stops_the_run_and_leaves_a_resumable_store(corpus, monkeypatch):
    with FakeLLM(key=KEY) as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        with loaded(corpus) as wh:
            ceiling = 6.0
            settings = Settings(concurrency=1, rate=1000, retries=1, timeout=5, max_cost=ceiling)
            stopped = http_extract(wh, settings)
            spent = sum(estimated_cost(e) for e in server.log)
            dearest = max(estimated_cost(e) for e in server.log)
            assert 0 < stopped.complete < stopped.total
            assert stopped.missing and "cost ceiling of USD 6" in stopped.missing and "resumable" in stopped.missing
            assert f"{stopped.total - stopped.complete:,} of {stopped.total:,} rows are missing" in stopped.missing
            assert wh.sql("SELECT sum(cost_usd) FROM raw.extraction_calls")[0][0] == pytest.approx(spent)
            assert spent <= ceiling < spent + 2 * dearest  # stopped before a call that could exceed it
            assert len(server.log) == stopped.complete
            resumed = http_extract(wh, Settings(concurrency=1, rate=1000, retries=1, timeout=5, max_cost=1e6))
            assert resumed.missing is None and resumed.complete == resumed.total
            assert set(server.answers.values()) == {1} and len(server.answers) == len(corpus.texts)


def test_a_refused_key_stops_at_once_and_the_key_is_never_stored(corpus, monkeypatch):
    with FakeLLM(key="the-right-key") as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        with loaded(corpus) as wh:
            result = http_extract(wh, Settings(concurrency=1, rate=1000, retries=5, timeout=5))
            recorded = calls(wh)
            dump = json.dumps(wh.sql("SELECT * FROM raw.extraction_calls"), default=str)
            dump += json.dumps(wh.sql("SELECT * FROM meta.sources"), default=str)
    assert [c["status"] for c in recorded] == ["http_4xx"] and "401" in recorded[0]["error"]
    assert len(server.log) == 1
    assert "refused" in result.missing and "resumable" in result.missing
    assert KEY not in dump and KEY not in result.missing


def test_a_persistent_error_stops_cleanly_and_a_restart_extracts_only_the_missing_rows(corpus, monkeypatch):
    with FakeLLM(delay=0.02) as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        broken = corpus.texts["train", 7]
        server.faults[broken] = ["500"] * 3
        with loaded(corpus) as wh:
            settings = Settings(concurrency=2, rate=1000, retries=2, timeout=5, backoff=0.01, max_cost=1e6)
            first = http_extract(wh, settings)
            assert first.missing and "train row 7 failed all its 3 attempts" in first.missing
            assert [c["status"] for c in calls(wh, "row_index = 7 AND split = 'train'")] == ["http_5xx"] * 3
            kept = stored_values(wh)
            assert 0 < first.complete < first.total
            second = http_extract(wh, settings)
            assert second.missing is None
            assert [c["attempt"] for c in calls(wh, "row_index = 7 AND split = 'train'")] == [1, 2, 3, 4]
            assert {k: v for k, v in stored_values(wh).items() if k in kept} == kept
            assert wh.sql("SELECT count(*) FROM raw.feature_values")[0][0] == len(corpus.texts) * len(FEATURES)
        assert set(server.answers.values()) == {1} and len(server.answers) == len(corpus.texts)


def test_resumption_after_a_kill(corpus, tmp_path):
    """`python -m rankhouse features extract` killed (SIGKILL) after 5 committed rows, then run again:
    the store is complete and the server answered every message exactly once."""
    db = tmp_path / "kill.duckdb"
    command = [sys.executable, "-m", "rankhouse", "features", "extract", str(corpus.protocol), "--db", str(db),
               "--concurrency", "2", "--rate", "200", "--timeout", "5", "--no-smoke", NO_SMOKE]  # fmt: skip
    with FakeLLM(delay=0.05, key=KEY) as server:
        env = {**os.environ, **endpoint_env(server, prices=False), "PYTHONPATH": str(ROOT)}
        server.hold_after = 5
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        deadline = time.monotonic() + 60
        while (server.answered < 5 or server.held < 2) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        time.sleep(0.3)  # the fifth answer committed; both workers are held
        assert process.poll() is None, process.stderr.read().decode()
        process.send_signal(signal.SIGKILL)
        process.wait()
        server.release.set()
        # the committed rows are in the inputs' building copy, which the next writer carries on from
        building = tmp_path / "kill.d" / "building" / "inputs.duckdb"
        with duckdb.connect(str(building), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM raw.feature_values").fetchall()[0][0] == 5 * len(FEATURES)
            # 5 answered calls, and the 2 attempts in flight at the kill: kept as possibly charged (seed 004)
            assert con.execute("SELECT status, possibly_charged, count(*) FROM raw.extraction_calls GROUP BY ALL "
                               "ORDER BY ALL").fetchall() == [("in_flight", True, 2), ("ok", False, 5)]  # fmt: skip
        server.hold_after = None
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "carrying on from an interrupted load" in done.stderr
        assert "rows/s" in done.stderr and "ETA" in done.stderr  # the progress line
        assert "Traceback" not in done.stderr and KEY not in done.stderr
        assert set(server.answers.values()) == {1} and len(server.answers) == len(corpus.texts)
        assert [e["status"] for e in server.log].count("dropped") == 2
    with Warehouse(db) as wh:
        assert wh.sql("SELECT count(DISTINCT (split, row_index)) FROM raw.feature_values")[0][0] == len(corpus.texts)
        build(wh, "+feature_coverage +extraction_receipts")
        assert wh.sql("SELECT sum(missing) FROM models.feature_coverage")[0][0] == 0
        receipts = dict(wh.sql("SELECT split, in_flight FROM models.extraction_receipts"))
        assert receipts["all"] == 2  # the attempts killed in flight stay in the receipts


def test_prepare_refuses_an_incomplete_extraction_and_resumes_it(corpus, monkeypatch, tmp_path):
    """The generator in a study's prepare: stopped at the ceiling it raises, saying what is missing; with a
    higher ceiling (an environment setting, not a protocol parameter) prepare completes the store."""
    from rankhouse.study import Protocol, Study

    with FakeLLM() as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("RANKHOUSE_EXTRACT_MAX_COST", "3")
        monkeypatch.setenv("RANKHOUSE_EXTRACT_RATE", "1000")
        monkeypatch.setenv("RANKHOUSE_EXTRACT_NO_SMOKE", NO_SMOKE)
        with Warehouse(tmp_path / "p.duckdb") as wh:
            study = Study(Protocol.load(corpus.protocol), wh, tmp_path / "freezes")
            with pytest.raises(RankhouseError) as err:
                study.prepare()
            assert str(err.value).startswith("[generate.features]: the feature extraction of c")
            assert "rows are missing" in str(err.value) and "re-run the same command" in str(err.value)
            monkeypatch.setenv("RANKHOUSE_EXTRACT_MAX_COST", "1000")
            study.prepare()
            assert wh.sql("SELECT sum(missing), sum(complete) FROM models.feature_coverage") == [(0, 40)]
        assert set(server.answers.values()) == {1} and len(server.answers) == len(corpus.texts)


def test_a_store_of_texts_loaded_again_from_other_bytes_is_refused(corpus, monkeypatch, tmp_path):
    with FakeLLM() as server:
        for name, value in endpoint_env(server, prices=False).items():
            monkeypatch.setenv(name, value)
        with loaded(corpus) as wh:
            assert http_extract(wh, smoke=2).complete == 2
            edited = tmp_path / "train.csv"
            edited.write_text((corpus.root / "train.csv").read_text().replace("card", "kard", 1))
            LOADERS["csv.documents"].load(wh, edited, CORPUS)
            with pytest.raises(RankhouseError, match="raw.documents of corpus 'c' were loaded again from other bytes"):
                http_extract(wh)
        assert len(server.log) == 2


def test_a_smoke_batch_is_never_complete(corpus, monkeypatch, tmp_path):
    """--smoke N extracts the first N training rows only; the coverage gate then refuses the prepare build."""
    with FakeLLM() as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        db = tmp_path / "smoke.duckdb"
        assert cli(["features", "extract", str(corpus.protocol), "--db", str(db), "--smoke", "4"]) == 0
        assert sorted(e["text"] for e in server.log) == sorted(corpus.splits["train"][:4])
    with Warehouse(db) as wh:
        assert wh.sql("SELECT DISTINCT split, row_index FROM raw.feature_values ORDER BY 2") == [
            ("train", i) for i in range(4)]  # fmt: skip
        with pytest.raises(AuditError) as err:
            build(wh, "+feature_coverage")
        assert "accepted_range(missing, 0, 0)" in str(err.value) and "missing=26" in str(err.value)


def test_the_full_extraction_waits_for_a_smoke_batch_or_a_reason(corpus, monkeypatch, tmp_path):
    """Seed 004's operational plan: a train-only smoke batch first. Without one (and without a reason) the
    full http extraction is refused before a request is sent; after one it runs; a reason is recorded."""
    from rankhouse.studies.features.extraction.run import NO_SMOKE as KEY_NO_SMOKE

    with FakeLLM() as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        with loaded(corpus) as wh:
            for kind in ("feature_extraction", "requirement_interpretation"):
                if kind == "requirement_interpretation":
                    make_paraphrases(wh)
                with pytest.raises(RankhouseError, match="no smoke batch has completed.*--smoke 20.*--no-smoke"):
                    http_extract(wh, kind=kind, no_smoke=None)
                with pytest.raises(RankhouseError, match="no smoke batch"):
                    http_extract(wh, kind=kind, no_smoke="   ")
            assert server.log == [] and wh.sql("SELECT count(*) FROM raw.extraction_calls")[0][0] == 0
            assert http_extract(wh, smoke=3, no_smoke=None).complete == 3
            full = http_extract(wh, no_smoke=None)
            assert full.missing is None and full.complete == len(corpus.texts)
            assert wh.sql("SELECT count(*) FROM meta.sources WHERE table_name = ?", [KEY_NO_SMOKE])[0][0] == 0
            assert wh.sql("SELECT count(*) FROM raw.extraction_calls WHERE status = 'in_flight'")[0][0] == 0
        with loaded(corpus) as wh:
            assert http_extract(wh, no_smoke="a rerun of a checked endpoint").missing is None
            assert wh.sql("SELECT path FROM meta.sources WHERE table_name = ?", [KEY_NO_SMOKE]) == [
                ("a rerun of a checked endpoint",)]  # fmt: skip
    db = tmp_path / "both.duckdb"
    assert cli(["features", "extract", str(corpus.protocol), "--db", str(db), "--smoke", "2", "--no-smoke", "x"]) == 2


def test_study_prepare_waits_for_a_smoke_batch_or_says_why_not(corpus, monkeypatch, tmp_path, capfd):
    """`rankhouse study prepare` with the http provider: refused before a request without a smoke batch;
    `--no-smoke REASON` starts the full extraction and records the reason."""
    from rankhouse.studies.features.extraction.run import NO_SMOKE as KEY_NO_SMOKE

    with FakeLLM() as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("RANKHOUSE_EXTRACT_NO_SMOKE", raising=False)
        monkeypatch.setenv("RANKHOUSE_EXTRACT_MAX_COST", "1000")
        monkeypatch.setenv("RANKHOUSE_EXTRACT_RATE", "1000")
        db = tmp_path / "p.duckdb"
        assert cli(["study", "prepare", str(corpus.protocol), "--db", str(db), "--quiet"]) == 2
        assert "no smoke batch has completed" in capfd.readouterr().err and server.log == []
        reason = "the loopback server of the tests, checked by another test"
        assert cli(["study", "prepare", str(corpus.protocol), "--db", str(db), "--quiet", "--no-smoke", reason]) == 0
        assert len({e["text"] for e in server.log}) == len(corpus.texts)
    from rankhouse.study import Protocol

    with Warehouse(db, read_only=True, namespace=Protocol.load(corpus.protocol).name) as wh:
        assert wh.sql("SELECT path FROM meta.sources WHERE table_name = ?", [KEY_NO_SMOKE]) == [(reason,)]
        assert wh.sql("SELECT sum(missing) FROM models.feature_coverage")[0][0] == 0


def test_requirement_interpretation_over_http(corpus, monkeypatch):
    with FakeLLM() as server:
        for name, value in endpoint_env(server).items():
            monkeypatch.setenv(name, value)
        with loaded(corpus) as wh:
            phrases = make_paraphrases(wh)
            server.faults[phrases[1][3]] = ["wrong_types"]
            result = http_extract(wh, kind="requirement_interpretation")
            assert result.missing is None and result.total == len(phrases)
            weights = {(i, f): w for i, f, w in wh.sql("SELECT item, feature, weight FROM raw.requirement_values")}
            flags = {r[0]: r[1:] for r in wh.sql("SELECT item, unsupported, review, coverage, note FROM "
                                                 "raw.requirement_flags")}  # fmt: skip
            keys = [(r[0], r[1]) for r in wh.sql("SELECT split, row_index FROM raw.extraction_calls ORDER BY ALL")]
    for group_row, paraphrase, item, text in phrases:
        expected = [three_decimals(feature_value(text, f)) for f in FEATURES]
        assert [weights[item, f] for f in FEATURES] == expected
        assert flags[item] == (*flags_of(text), max(expected), "fake reading")
        assert ("requirements", 1000 + 10 * group_row + paraphrase) in keys
    assert len(keys) == len(phrases) + 1  # one retried attempt


# -- the minilm stand-in --------------------------------------------------------------------------------
def make_paraphrases(wh: Warehouse) -> list[tuple[int, int, str, str]]:
    """raw.group_paraphrases as features.groups writes it (another part of issue 15), a few rows by hand."""
    phrases = [(0, 1, "G01.1", "when will my new card arrive"), (0, 2, "G01.2", "my card has not come in the post"),
               (1, 1, "G02.1", "what exchange rate do you use"), (1, 2, "G02.2", "I was charged a fee I didn't expect"),
               (2, 1, "G03.1", "the weather is nice today")]  # fmt: skip
    wh.sql("CREATE TABLE IF NOT EXISTS raw.group_paraphrases (corpus VARCHAR, group_id VARCHAR, group_row INTEGER, "
           "paraphrase INTEGER, item VARCHAR, text VARCHAR)")  # fmt: skip
    for group_row, paraphrase, item, text in phrases:
        wh.sql("INSERT INTO raw.group_paraphrases VALUES (?, ?, ?, ?, ?, ?)",
               [CORPUS, item.split(".")[0], group_row, paraphrase, item, text])  # fmt: skip
    return phrases


@pytest.fixture(scope="module")
def stand_in(corpus):
    """The minilm stand-in over the corpus, after the `vectors` generator made its messages' vectors."""
    from rankhouse.encode import Encoder
    from rankhouse.vectors import encode_corpus

    encoder = Encoder()
    wh = loaded(corpus)
    for kind in ("documents", "queries"):
        encode_corpus(wh, CORPUS, encoder, kind)
    cached = wh.sql("SELECT count(*) FROM raw.vector_cache")[0][0]
    options = {**OPTIONS, "provider": "minilm"}
    values = extract(wh, "feature_extraction", options, Settings(), lambda m: None, lambda: encoder)
    newly_cached = wh.sql("SELECT count(*) FROM raw.vector_cache")[0][0] - cached
    phrases = make_paraphrases(wh)
    requirements = extract(wh, "requirement_interpretation", options, Settings(), lambda m: None, lambda: encoder)
    yield type("StandIn", (), {"wh": wh, "encoder": encoder, "values": values, "requirements": requirements,
                               "newly_cached": newly_cached, "phrases": phrases})  # fmt: skip
    wh.close()


def oracle_rule(encoder, corpus, texts: list[str]) -> np.ndarray:  # noqa: ANN001
    """The stand-in's rule, independently: numpy's percentiles of the training cosines; unrounded."""
    questions = [f["question"] for f in tomllib.loads(SCHEMA.read_text())["feature"]]
    q = encoder.encode(questions).astype(np.float64)
    train = encoder.encode(corpus.splits["train"]).astype(np.float64) @ q.T
    lo, hi = np.percentile(train, 50, axis=0), np.percentile(train, 99, axis=0)
    return np.clip((encoder.encode(texts).astype(np.float64) @ q.T - lo) / (hi - lo), 0, 1)


def assert_rounded_equal(stored: np.ndarray, unrounded: np.ndarray) -> None:
    """Equal to the oracle at 3 decimals; within one thousandth where the oracle is at a rounding edge."""
    expected = np.round(unrounded, 3)
    edge = np.abs((unrounded * 1000) % 1 - 0.5) < 1e-4
    assert np.array_equal(stored[~edge], expected[~edge])
    assert np.all(np.abs(stored - expected) <= 0.001 + 1e-12)


def test_the_stand_in_rule_matches_numpy(stand_in, corpus):
    assert stand_in.values.missing is None and stand_in.values.total == len(corpus.texts)
    stored = stored_values(stand_in.wh)
    assert {e for _, _, e in stand_in.wh.sql("SELECT DISTINCT 1, 1, extractor FROM raw.feature_values")} == {
        f"minilm:{stand_in.encoder.fingerprint[:12]}"}  # fmt: skip
    for split in ("train", "test"):
        texts = corpus.splits[split]
        got = np.array([[stored[split, i, f] for f in FEATURES] for i in range(len(texts))])
        assert_rounded_equal(got, oracle_rule(stand_in.encoder, corpus, texts))
    values = np.array(list(stored.values()))
    assert values.min() == 0 and values.max() == 1 and np.mean(values == 0) >= 0.35  # half the training at lo
    assert stand_in.newly_cached == len(FEATURES)  # the messages' vectors were reused: only the questions encoded
    batches = calls(stand_in.wh, "provider = 'minilm' AND split IN ('train', 'test')")
    assert [(c["split"], c["row_index"], c["status"], c["cost_usd"], c["prompt_tokens"]) for c in batches] == [
        ("test", None, "ok", 0.0, 0), ("train", None, "ok", 0.0, 0)]  # fmt: skip


def test_the_stand_in_interprets_phrases_by_the_same_rule(stand_in, corpus):
    assert stand_in.requirements.missing is None
    texts = [p[3] for p in stand_in.phrases]
    unrounded = oracle_rule(stand_in.encoder, corpus, texts)
    weights = {(i, f): w for i, f, w in stand_in.wh.sql("SELECT item, feature, weight FROM raw.requirement_values")}
    got = np.array([[weights[p[2], f] for f in FEATURES] for p in stand_in.phrases])
    assert_rounded_equal(got, unrounded)
    flags = {r[0]: r[1:] for r in stand_in.wh.sql("SELECT item, unsupported, review, coverage FROM "
                                                  "raw.requirement_flags")}  # fmt: skip
    for (_, _, item, _), row in zip(stand_in.phrases, got, strict=True):
        strong = [w for w in row if w >= 0.5]
        top = sorted(row, reverse=True)
        review = len(strong) == 1 or Decimal(str(top[0])) - Decimal(str(top[1])) <= Decimal("0.05")
        assert flags[item] == (not strong, review, max(row))
    assert any(f[0] for f in flags.values()) and not all(f[0] for f in flags.values())


def test_a_second_run_extracts_nothing(stand_in):
    options = {**OPTIONS, "provider": "minilm"}
    before = stand_in.wh.sql("SELECT count(*) FROM raw.extraction_calls")[0][0]
    again = extract(stand_in.wh, "feature_extraction", options, Settings(), lambda m: None, lambda: stand_in.encoder)
    assert again.missing is None
    assert stand_in.wh.sql("SELECT count(*) FROM raw.extraction_calls")[0][0] == before


def test_coverage_and_receipts_of_the_stand_in(stand_in, corpus):
    params = {**PARAMS, "provider": "minilm"}
    build(stand_in.wh, "+feature_coverage +extraction_receipts", params)
    assert stand_in.wh.sql("SELECT split, expected, complete, missing, extractors FROM models.feature_coverage "
                           "ORDER BY split") == [("test", 10, 10, 0, 1), ("train", 30, 30, 0, 1)]  # fmt: skip
    receipts = dict(stand_in.wh.sql("SELECT split, calls FROM models.extraction_receipts"))
    assert receipts == {"train": 1, "test": 1, "requirements": 1, "all": 3}
    # a changed schema (other bytes) is another key: its store starts empty
    stand_in.wh.sql("UPDATE raw.feature_schema SET schema_sha256 = 'other'")
    try:
        build(stand_in.wh, "feature_completeness", params)
        assert stand_in.wh.sql("SELECT sum(complete) FROM models.feature_completeness")[0][0] == 0
    finally:
        stand_in.wh.sql("UPDATE raw.feature_schema SET schema_sha256 = ?", [hashlib.sha256(SCHEMA.read_bytes())
                                                                            .hexdigest()])  # fmt: skip


# -- settings, errors, progress -------------------------------------------------------------------------
def test_settings_come_from_options_else_the_environment_else_defaults():
    env = {"RANKHOUSE_EXTRACT_CONCURRENCY": "3", "RANKHOUSE_EXTRACT_MAX_COST": "0.5"}
    assert Settings.from_env(env, rate=2.0) == Settings(concurrency=3, rate=2.0, max_cost=0.5)
    assert Settings.from_env({}, concurrency=None) == Settings(8, 15.0, 5.0, 5, 60.0)
    with pytest.raises(RankhouseError, match="RANKHOUSE_EXTRACT_RETRIES='many' is not a whole number"):
        Settings.from_env({"RANKHOUSE_EXTRACT_RETRIES": "many"})
    with pytest.raises(RankhouseError, match="concurrency must be at least 1"):
        Settings(concurrency=0)


def test_extraction_usage_errors_are_one_line(corpus, capsys, monkeypatch):
    monkeypatch.delenv("RANKHOUSE_LLM_URL", raising=False)
    assert cli(["features", "extract", str(corpus.protocol), "--db", ":memory:", "--rate", "0"]) == 2
    assert "--rate" in capsys.readouterr().err
    assert cli(["features", "extract", str(corpus.protocol), "--db", ":memory:"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the http provider needs RANKHOUSE_LLM_URL") and "Traceback" not in err
    assert cli(["features", "receipts", str(corpus.protocol), "--format", "xml"]) == 2


def test_progress_reports_rows_rate_cost_and_eta(capsys):
    now = [0.0]
    lines: list[str] = []
    progress = Meter("extracting", 100, 20, tty=False, write=lines.append, clock=lambda: now[0])
    for _ in range(8):
        now[0] += 1.0
        progress.advance(5, 0.25)
    progress.finish()
    assert lines[-1] == "extracting: 60/100 rows (60%), 5.0 rows/s, USD 0.2500, ETA 0:08\n"
    assert len(lines) == 3  # the first advance, every 5 s, the end
    drawn: list[str] = []
    tty = Meter("x", 10, 0, tty=True, write=drawn.append, clock=lambda: now[0])
    tty.advance(10, 0.0)
    tty.finish()
    assert drawn[0].startswith("\rx: 10/10 rows") and drawn[-1] == "\n"
    stream = io.StringIO()  # --json: the same reports as events; --quiet: none
    meter = JsonProgress(stream).meter("extracting", 100, 20, 0.5)
    meter.advance(5, 0.75)
    meter.finish()
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["rows", "rows"] and events[-1]["done"] == 25
    assert {k: events[-1][k] for k in ("label", "total", "cost")} == {"label": "extracting", "total": 100, "cost": 0.75}
    silent = SILENT.meter("extracting", 10, 0)
    silent.advance(10, 0.0)
    silent.finish()
    assert capsys.readouterr() == ("", "")


def test_the_new_models_are_portable_and_read_raw_only_in_staging():
    from rankhouse.warehouse.portability import portability_problems

    project = Project.load()
    for name in ("extraction_calls", "feature_completeness", "feature_coverage", "extraction_receipts"):
        assert portability_problems(project.models[name]) == []
        reads_raw = any(r.startswith("raw.") for r in project.references[name])
        assert reads_raw == (name in ("extraction_calls", "feature_completeness"))
        assert project.models[name].group == ("features" if name == "extraction_receipts" else "features/staging")


def test_json_progress_of_an_extraction_is_json_lines_only(corpus, tmp_path):
    """`features extract --json`: every stderr line is a JSON event, the rows meter among them, ending at
    every message; `--quiet` prints nothing on stderr."""
    command = ["features", "extract", corpus.protocol, "--concurrency", "2", "--rate", "200", "--timeout", "5",
               "--no-smoke", NO_SMOKE]  # fmt: skip
    with FakeLLM(key=KEY) as server:
        env = {**os.environ, **endpoint_env(server, prices=False), "PYTHONPATH": str(ROOT)}
        done = rankhouse(*command, "--db", tmp_path / "j.duckdb", "--json", env=env, cwd=tmp_path)
        quiet = rankhouse(*command, "--db", tmp_path / "q.duckdb", "--quiet", env=env, cwd=tmp_path)
    assert done.returncode == 0 and quiet.returncode == 0, done.stderr + quiet.stderr
    events = [json.loads(line) for line in done.stderr.splitlines()]
    rows = [e for e in events if e["event"] == "rows"]
    assert rows and rows[-1]["done"] == rows[-1]["total"] == len(corpus.texts)
    assert quiet.stderr == ""
