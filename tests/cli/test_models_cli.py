"""`rankhouse models list` (--select, --stage, --study, --db with each model's status) and `rankhouse
models lineage` (--depth, --format text|dot|mermaid), checked against the project's own graph."""

from __future__ import annotations

import re

import pytest
from clirunner import rankhouse_in_process
from conftest import TREC

from rankhouse.paths import ROOT
from rankhouse.study import Protocol
from rankhouse.warehouse.dag import Project


def listed(done) -> list[list[str]]:  # noqa: ANN001 - a CompletedProcess
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    return [re.split(r"\s{2,}", line) for line in lines[2:]]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A warehouse with the trec_eval sample's measures built."""
    db = tmp_path_factory.mktemp("models") / "w.duckdb"
    for args in (("load", "qrels", TREC / "qrels.test"), ("load", "run", TREC / "results.test"),
                 ("run", "-s", "+run_measures", "-p", "measures=AP,P.10")):  # fmt: skip
        done = rankhouse_in_process(*args, "--db", db)
        assert done.returncode == 0, done.stderr
    return db


def test_list_filters_by_selection_stage_and_study():
    project = Project.load()
    rows = listed(rankhouse_in_process("models", "list", "-s", "+measure_ap"))
    assert [r[0] for r in rows] == project.select("+measure_ap")
    rows = listed(rankhouse_in_process("models", "list", "--stage", "prepare"))
    assert {r[0] for r in rows} == {n for n, m in project.models.items() if m.stage == "prepare"}
    protocol = Protocol.load(ROOT / "studies" / "banking77.toml")
    mine = Project.load(params=protocol.parameters).select(f"{protocol.prepare} {protocol.evaluate}")
    rows = listed(rankhouse_in_process("models", "list", "--study", ROOT / "studies" / "banking77.toml"))
    assert sorted(r[0] for r in rows) == sorted(mine) and "evidence_greedy" not in mine
    done = rankhouse_in_process("models", "list", "--stage", "prep")
    assert done.returncode == 2 and "--stage is prepare or evaluate, not 'prep'" in done.stderr


def test_list_shows_each_models_status_in_a_warehouse(built):
    selection = "+run_measures +paired_bootstrap"
    rows = listed(rankhouse_in_process("models", "list", "-s", selection, "-p", "measures=AP,P.10", "--db", built))
    status = {r[0]: r[4] for r in rows}
    assert status["run_measures"] == status["measure_ap"] == status["judged_ranking"] == "built"
    assert status["paired_bootstrap"] == "never built"
    # other parameters, other fingerprints: what was built for AP and P@10 is out of date for P@5 alone
    rows = listed(rankhouse_in_process("models", "list", "-s", "+measure_precision", "-p", "measures=P.5",
                                       "--db", built))  # fmt: skip
    status = {r[0]: r[4] for r in rows}
    assert status["measure_precision"] == status["measure_requests"] == "out of date"
    assert status["judged_ranking"] == "built"  # it does not read the measures
    done = rankhouse_in_process("models", "list", "--db", built.parent / "none.duckdb")
    assert done.returncode == 2 and "error: no warehouse" in done.stderr


def graph_edges(text: str, output_format: str) -> set[tuple[str, str]]:
    if output_format == "dot":
        return set(re.findall(r'"([^"]+)" -> "([^"]+)";', text))
    names = dict(re.findall(r'(n\d+)\["([^"]+)"\]', text))
    return {(names[a], names[b]) for a, b in re.findall(r"(n\d+) --> (n\d+)", text)}


@pytest.mark.parametrize("output_format", ["dot", "mermaid"])
def test_lineage_graphs_are_the_projects_edges_to_the_depth(output_format):
    project = Project.load()
    done = rankhouse_in_process("models", "lineage", "judged_ranking", "--depth", "1", "--format", output_format)
    assert done.returncode == 0, done.stderr
    sources = sorted(r for r in project.references["judged_ranking"] if not r.startswith("models."))
    expected = {(p, "judged_ranking") for p in project.parents["judged_ranking"] + sources}
    expected |= {("judged_ranking", c) for c in project.children["judged_ranking"]}
    assert graph_edges(done.stdout, output_format) == expected


def test_lineage_text_depth_limits_the_tree():
    full = rankhouse_in_process("models", "lineage", "judged_ranking").stdout.splitlines()
    one = rankhouse_in_process("models", "lineage", "judged_ranking", "--depth", "1").stdout.splitlines()
    assert len(one) < len(full) and all(not line.startswith("    ") for line in one)
    project = Project.load()
    downstream = one[one.index("downstream (read by):") + 1 :]
    assert [line.removeprefix("└── ") for line in downstream] == project.children["judged_ranking"]
