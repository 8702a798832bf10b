"""Shared fixtures: paths, warehouses, and plain-Python readers for the oracles.

The tests are laid out like the code (docs/testing.md); this file, the other support modules beside it
(clirunner.py, oracles.py, ...) and the data folders (fixtures/, golden/, recorded/) stay at tests/, which
pyproject.toml puts on sys.path (`pythonpath`), so that a test in any folder imports them by name. A test
module imports no other test module."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankhouse.warehouse import Warehouse

TESTS = Path(__file__).parent
CHECKOUT = TESTS.resolve().parent
FIXTURES = TESTS / "fixtures"
TREC = FIXTURES / "trec_eval"
GOLDEN = TESTS / "golden"  # the golden fixtures (tests/measures/test_snapshots.py)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="Rewrite the golden files of the snapshot tests.")


# `make test` runs the suite on two pytest-xdist workers (`-n 2 --dist loadgroup`). A session fixture is
# built once per worker that asks for it, so every test that reads a session study warehouse runs in one
# group (one worker builds them once), as do the Spark tests (one JVM); every other test runs with the
# rest of its module, so that module-scoped fixtures are built once too. A test that asks for a session
# fixture by name (request.getfixturevalue) says its group itself (@pytest.mark.xdist_group).
SESSION_GROUPS = {
    "studies": {"studies_warehouse", "banking77_study", "fusion_banking77_study", "evidence_demo_study",
                "lanes_subset_study", "study_reports"},
    "spark": {"spark"},
}  # fmt: skip


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        fixtures = set(getattr(item, "fixturenames", ()))
        group = next((name for name, needs in SESSION_GROUPS.items() if fixtures & needs), item.path.name)
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture
def wh():
    """A throw-away in-memory warehouse (with its own throw-away labels file)."""
    with Warehouse(":memory:") as warehouse:
        yield warehouse


@pytest.fixture(scope="session")
def studies_warehouse(tmp_path_factory):
    """The one warehouse of the session's study fixtures (issue 34: many studies in one warehouse), run in
    this order: BANKING77 retrieval, fusion on BANKING77 (its vectors and retrieval tables shared by
    fingerprint), the evidence demo, the lanes study on a subset; each fixture in a session of its own,
    in its study's namespace. tests/gate/test_many_studies.py runs them again in another order."""
    return tmp_path_factory.mktemp("studies") / "studies.duckdb"


@pytest.fixture(scope="session")
def banking77_study(studies_warehouse):
    """The BANKING77 study (studies/banking77.toml) run once end to end, for every test module that
    needs it; later studies on the same corpus (fusion) run in the same warehouse and reuse its
    vectors and retrieval models' tables (the same fingerprints), each in its own namespace."""
    import csv
    import json
    from types import SimpleNamespace

    from rankhouse.paths import ROOT
    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import write_outputs

    def texts(name: str) -> list[dict]:
        with (ROOT / "data" / "banking77" / name).open(newline="") as handle:
            return list(csv.DictReader(handle))

    root = studies_warehouse.parent
    warehouse = Warehouse(studies_warehouse)
    study = Study(Protocol.load(ROOT / "studies" / "banking77.toml"), warehouse)
    evaluation = study.run()
    write_outputs(study, evaluation, root / "out")
    yield SimpleNamespace(
        wh=warehouse,
        db=studies_warehouse,
        root=root,
        freeze=evaluation.freeze.freeze_id,
        results=json.loads((root / "out" / "results.json").read_text()),
        train=texts("train.csv"),
        test=texts("test.csv"),
    )
    warehouse.close()


@pytest.fixture(scope="session")
def fusion_banking77_study(banking77_study):
    """The fusion study (studies/fusion_banking77.toml) run once in the BANKING77 study's warehouse, in a
    session of its own (its namespace; the BANKING77 study's session stays in that study's)."""
    import json
    from types import SimpleNamespace

    from rankhouse.paths import ROOT
    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import write_outputs

    base = banking77_study
    protocol = Protocol.load(ROOT / "studies" / "fusion_banking77.toml")
    wh = Warehouse(base.db)  # a session of its own, in the fusion study's namespace
    study = Study(protocol, wh)
    evaluation = study.run()
    out = base.root / "fusion_out"
    write_outputs(study, evaluation, out)
    yield SimpleNamespace(
        wh=wh, out=out, params=protocol.parameters, freeze=evaluation.freeze,
        results=json.loads((out / "results.json").read_text()), train=base.train, test=base.test,
    )  # fmt: skip
    wh.close()


@pytest.fixture(scope="session")
def evidence_demo_study(fusion_banking77_study, studies_warehouse):
    """The evidence study (studies/evidence_demo.toml) run once end to end, in the session's warehouse of
    studies after the BANKING77 ones."""
    import json
    from types import SimpleNamespace

    from rankhouse.paths import ROOT
    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import write_outputs

    root = studies_warehouse.parent / "evidence_demo"
    root.mkdir()
    wh = Warehouse(studies_warehouse)
    protocol = Protocol.load(ROOT / "studies" / "evidence_demo.toml")
    study = Study(protocol, wh)
    evaluation = study.run()
    out = root / "out"
    write_outputs(study, evaluation, out)
    yield SimpleNamespace(wh=wh, out=out, freeze=evaluation.freeze, params=protocol.parameters,
                          results=json.loads((out / "results.json").read_text()))  # fmt: skip
    wh.close()


SUBSET_STEP = 8  # the lanes study on every 8th training message: 1,251 documents, ~1,000 texts to encode
BANKING77_TRAIN_SHA256 = "b06e26ac675513959a63135f11b94ea7786ed02da65db93a5650d8838cbc664b"


def lanes_subset_protocol(root: Path) -> tuple[Path, list[dict]]:
    """studies/lanes_banking77.toml over every SUBSET_STEP-th training message (written to `root`): the
    protocol file and the training rows it uses."""
    import csv
    import hashlib
    import json

    from rankhouse.paths import ROOT

    with (ROOT / "data" / "banking77" / "train.csv").open(newline="") as handle:
        train = list(csv.DictReader(handle))[::SUBSET_STEP]
    subset = root / "train_subset.csv"
    with subset.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["text", "category"])
        writer.writerows((r["text"], r["category"]) for r in train)
    text = (ROOT / "studies" / "lanes_banking77.toml").read_text()
    text = text.replace("../data/banking77/train.csv", str(subset))
    text = text.replace(BANKING77_TRAIN_SHA256, hashlib.sha256(subset.read_bytes()).hexdigest())
    text = text.replace('"banking77_groups.toml"', json.dumps(str(ROOT / "studies" / "banking77_groups.toml")))
    path = root / "lanes_subset.toml"
    path.write_text(text)
    return path, train


@pytest.fixture(scope="session")
def lanes_subset_study(evidence_demo_study, studies_warehouse):
    """The lanes study on a subset of BANKING77 (lanes_subset_protocol), run once end to end, in the
    session's warehouse of studies after the others."""
    import json
    import tomllib
    from types import SimpleNamespace

    from rankhouse.paths import ROOT
    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import write_outputs

    root = studies_warehouse.parent / "lanes"
    root.mkdir()
    protocol, train = lanes_subset_protocol(root)
    wh = Warehouse(studies_warehouse)
    study = Study(Protocol.load(protocol), wh)
    evaluation = study.run()
    written = write_outputs(study, evaluation, root / "out")
    groups = tomllib.loads((ROOT / "studies" / "banking77_groups.toml").read_text())["group"]
    yield SimpleNamespace(wh=wh, study=study, root=root, out=root / "out", written=written, train=train, groups=groups,
                          results=json.loads((root / "out" / "results.json").read_text()))  # fmt: skip
    wh.close()


def copied(out: Path, to: Path) -> Path:
    """A study's output directory without its run files, bundle and HTML report (the report reads none of them;
    a writer's own report.md is kept)."""
    import shutil

    shutil.copytree(out, to, ignore=shutil.ignore_patterns("runs", "bundle", "*.run", "report.html", "figures"))
    return to


@pytest.fixture(scope="session")
def study_reports(tmp_path_factory, banking77_study, fusion_banking77_study, evidence_demo_study, lanes_subset_study):
    """`rankhouse report` of each session study, built once on a copy of its output directory:
    {kind: (fixture, folder, report.html's text)} (tests/report/test_report.py, tests/report/test_report_browser.py)."""
    from rankhouse.report import build

    root = tmp_path_factory.mktemp("reports")
    found = {}
    for name, fixture in (("retrieval", banking77_study), ("fusion", fusion_banking77_study),
                          ("evidence", evidence_demo_study), ("lanes", lanes_subset_study)):  # fmt: skip
        folder = copied(fixture.out if hasattr(fixture, "out") else fixture.root / "out", root / name)
        build(folder)
        found[name] = (fixture, folder, (folder / "report.html").read_text())
    return found


@pytest.fixture(scope="session")
def trec_sample_run(tmp_path_factory):
    """trec_sample by `rankhouse study run --out` in a warehouse of its own: (root, the finished process);
    the outputs, and the report that the command writes last, in root/out."""
    from clirunner import rankhouse

    from rankhouse.paths import ROOT

    root = tmp_path_factory.mktemp("trec_sample_run")
    done = rankhouse("study", "run", ROOT / "studies" / "trec_sample.toml", "--db", root / "w.duckdb", "--out",
                     root / "out", cwd=root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root, done


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Qrels as pytrec_eval wants them, read independently of rankhouse."""
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            qid, _, docno, rel = line.split()
            qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """A run as pytrec_eval wants it (fields after the sixth ignored, as trec_eval does)."""
    run: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            qid, _, docno, _, score = line.split()[:5]
            run.setdefault(qid, {})[docno] = float(score)
    return run


@pytest.fixture(scope="session")
def trec_sample_study(tmp_path_factory):
    """studies/trec_sample.toml run end to end in a warehouse of its own (seconds), and a copy of the
    warehouse and its freezes taken once it was frozen, before its evaluation (its labels not loaded yet)."""
    from types import SimpleNamespace

    from warehouse_files import copy_warehouse

    from rankhouse.paths import ROOT
    from rankhouse.study import Protocol, Study

    root = tmp_path_factory.mktemp("trec_sample")
    protocol = Protocol.load(ROOT / "studies" / "trec_sample.toml")
    db, frozen = root / "w.duckdb", root / "frozen"
    with Warehouse(db) as wh:
        study = Study(protocol, wh)
        study.prepare()
        study.freeze()
    frozen.mkdir()
    copy_warehouse(db, frozen / "w.duckdb")  # its files, freezes included (the labels: made by evaluate)
    with Warehouse(db) as wh:
        Study(protocol, wh).evaluate()
    return SimpleNamespace(
        db=db, frozen=frozen / "w.duckdb", protocol=protocol, path=ROOT / "studies" / "trec_sample.toml"
    )


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """The test session's one SparkSession (local[2], small shuffles, no UI), for every Spark test
    module; skips the test without pyspark or Java. On the fixtures' few rows Spark spends more time
    compiling than running, so it generates no code and its JVM compiles with C1 only (the JVM starts and
    the first eval runs in about half the time and CPU: docs/performance.md)."""
    pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'rankhouse[spark]'")
    from pyspark.sql import SparkSession

    from rankhouse.warehouse.spark import java_available

    if not java_available():
        pytest.skip("Spark needs Java 17 or 21 (JAVA_HOME or java on PATH)")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("rankhouse-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))  # not ./spark-warehouse
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
