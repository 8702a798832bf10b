"""The gated study of the label gate's tests (tests/gate/): a protocol over trec_eval's sample, in a folder
of its own with its own copies of the data and of the models, so that a test can tamper with them
(make_env), opened and run through the Python API."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import TREC
from warehouse_files import plain, state, store_table

from rankhouse.errors import RankhouseError
from rankhouse.paths import MODELS_DIR
from rankhouse.study import Protocol, Study
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.layout import Layout

MEASURES = ["AP", "nDCG@10", "P@5", "RR", "NumRet", "NumRelRet"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_protocol(root: Path, measures: list[str] = MEASURES, extra: str = "") -> Path:
    inputs = {"results": "results.test", "trunc": "results.trunc", "qrels": "qrels.test"}
    lines = ["[study]", 'name = "gated"', 'description = "a test study"', ""]
    for key, name in inputs.items():
        loader = "trec.qrels" if key == "qrels" else "trec.run"
        lines += [f"[inputs.{key}]", f'path = "data/{name}"', f'sha256 = "{sha(root / "data" / name)}"',
                  f'loader = "{loader}"', ""]  # fmt: skip
    lines += ["[parameters]", f"measures = {json.dumps(measures)}", "", "[stages]",
              'prepare = "run_ranking measure_requests"', 'evaluate = "+run_measures"', extra]  # fmt: skip
    path = root / "gated.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def make_env(root: Path) -> tuple[Path, Path]:
    """A study with its own copies of the data and of the models, so that tests can tamper with them."""
    (root / "data").mkdir()
    for name in ("results.test", "results.trunc", "qrels.test"):
        shutil.copy(TREC / name, root / "data" / name)
    shutil.copytree(MODELS_DIR, root / "models")
    protocol = write_protocol(root)
    return root, protocol


def open_study(root: Path, protocol: Path) -> tuple[Warehouse, Study]:
    wh = Warehouse(root / "w.duckdb")
    return wh, Study(Protocol.load(protocol), wh, root / "freezes", Project.load(root / "models"))


def labels_file(root: Path) -> Path:
    """The study's labels file (made by its first evaluation)."""
    return Layout.of(root / "w.duckdb").labels_file("gated")


def prepared_and_frozen(root: Path, protocol: Path) -> None:
    wh, study = open_study(root, protocol)
    with wh:
        study.prepare()
        study.freeze()


def tamper_model(root: Path, protocol: Path) -> str:
    path = root / "models" / "staging" / "run_ranking.sql"
    call = "{{ trec_order('r.score', 'r.docno', score_precision) }}"
    assert call in path.read_text()
    path.write_text(path.read_text().replace(call, "r.score DESC, r.docno ASC"))
    return "model run_ranking changed"


def tamper_parameter(root: Path, protocol: Path) -> str:
    protocol.write_text(protocol.read_text().replace('"NumRelRet"]', '"NumRelRet", "P@10"]'))
    return "parameter measures is"


def tamper_input(root: Path, protocol: Path) -> str:
    run = root / "data" / "results.trunc"
    run.write_text(run.read_text().replace("FBIS3-27619", "FBIS3-00000", 1))
    return "input trunc"


def tamper_table(root: Path, protocol: Path, cutoff: int = 3) -> str:
    """Edit the rows of measure_requests in its store table, with plain DuckDB (its namespace's view reads it)."""
    with plain(root / "w.duckdb", "gated") as con:
        con.execute(
            f"UPDATE {store_table(con, 'gated', 'measure_requests')} SET cutoff = {cutoff} WHERE measure = 'P@5'"
        )
    return "table models.measure_requests differs from its frozen rows"


def assert_evaluate_refused(env: tuple[Path, Path], tamper, evaluated_before: bool) -> None:
    """Prepare and freeze, evaluate or not, tamper: evaluate is refused, names the change and writes nothing."""
    root, protocol = env
    prepared_and_frozen(root, protocol)
    if evaluated_before:
        wh, study = open_study(root, protocol)
        with wh:
            study.evaluate()
    message = tamper(root, protocol)
    before = state(root / "w.duckdb")
    wh, study = open_study(root, protocol)
    with wh, pytest.raises(RankhouseError) as err:
        study.evaluate()
    assert "the labels stay closed" in str(err.value) and message in str(err.value)
    assert state(root / "w.duckdb") == before
