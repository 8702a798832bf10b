"""Parts of a study (rankings' `model@part`, judgments' `part_judgments`): each part has its own
queries, judgments and systems, and every measure and statistic of the shared layer is taken per part.

The oracle is pytrec_eval on each part's own qrels; the second part is the same run judged by a
shifted copy of the qrels (grade - 1, floored at 0), under its own query ids."""

from __future__ import annotations

import shutil

import pytest
from conftest import TREC, read_qrels, read_run
from oracles import pytrec_per_query

from rankhouse.evaluation import EvalOptions, load_inputs
from rankhouse.paths import MODELS_DIR
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

MEASURES = ["P@10", "R@10", "AP", "RR", "nDCG@10", "Success@5"]

SHIFTED = """-- name: shifted_judgments
-- version: 1
-- stage: evaluate
-- grain: query_key, doc_key
-- audits:
-- description: The qrels with every grade lowered by one (floored at 0), under query ids 'B-<qid>'.
SELECT query_key, 'B-' || query_id AS query_id, query_order, doc_key, greatest(grade - 1, 0) AS grade
FROM models.qrels_judgments
"""


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """run_measures and paired_differences of a study with parts: `eval` (the qrels) and `eval/b`
    (the shifted qrels), two systems (the same run under two names) in each."""
    models = tmp_path_factory.mktemp("models") / "models"
    shutil.copytree(MODELS_DIR, models)
    (models / "staging" / "shifted_judgments.sql").write_text(SHIFTED)
    params = {
        **EvalOptions(score_precision="float").parameters(),
        "measures": MEASURES,
        "rankings": ["run_ranking", "run_ranking@b"],
        "part_judgments": ["shifted_judgments@b"],
        "contrasts": [["one", "two"]],
        "contrast_measures": ["AP"],
    }
    run = TREC / "results.test"
    with Warehouse(":memory:") as wh:
        load_inputs(wh, TREC / "qrels.test", [f"one={run}", f"two={run}"])
        wh.open_gate()
        project = Project.load(models, params)
        Runner(wh, project, params).run(project.select("+run_measures +query_measures +paired_differences"))
        measured = wh.sql("SELECT study, system, query, measure, value FROM models.query_measures")
        means = wh.sql("SELECT study, system, measure, value, queries FROM models.run_measures WHERE subset = 'all'")
        differences = wh.sql("SELECT study, count(*), count(difference), max(abs(difference)) FROM "
                             "models.paired_differences GROUP BY study ORDER BY study")  # fmt: skip
    return measured, means, differences


def test_each_part_matches_pytrec_eval_on_its_own_qrels(parts):
    measured, _, _ = parts
    qrels = read_qrels(TREC / "qrels.test")
    shifted = {f"B-{q}": {d: max(g - 1, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    run = read_run(TREC / "results.test")
    expected = {
        "eval": pytrec_per_query(qrels, run, MEASURES),
        "eval/b": pytrec_per_query(shifted, {f"B-{q}": docs for q, docs in run.items()}, MEASURES),
    }
    ours: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for study, system, query, measure, value in measured:
        ours.setdefault((study, system), {}).setdefault(query, {})[measure] = value
    assert set(ours) == {("eval", "one"), ("eval", "two"), ("eval/b", "one"), ("eval/b", "two")}
    for (study, _), per_query in ours.items():
        oracle = {q: v for q, v in expected[study].items() if q in per_query or study == "eval"}
        assert set(per_query) == set(oracle)
        for query, values in oracle.items():
            for measure in MEASURES:
                assert per_query[query][measure] == pytest.approx(values[measure], abs=1e-12), (study, query, measure)
    # the parts differ: the shifted qrels have fewer relevant documents
    assert expected["eval"] != {q[2:]: v for q, v in expected["eval/b"].items()}


def test_means_and_contrasts_are_per_part(parts):
    _, means, differences = parts
    queries = {(study, system): n for study, system, _, _, n in means}
    judged = len(read_qrels(TREC / "qrels.test"))
    assert queries == {("eval", "one"): judged, ("eval", "two"): judged, ("eval/b", "one"): judged,
                       ("eval/b", "two"): judged}  # fmt: skip
    # one row per judged query in each part (same run under two names: every difference is 0)
    assert differences == [("eval", judged, judged, 0.0), ("eval/b", judged, judged, 0.0)]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.replace("[stages]", "[nothing]"), "[stages] lacks stages"),
        (
            lambda t: t.replace('loader = "trec.run"', 'loader = "trec.runs"', 1),
            "[inputs.results_test] unknown loader 'trec.runs'; known: ",
        ),
        (lambda t: t + '\n[generate.v]\nkind = "vector"\n', "[generate.v] unknown kind 'vector'; known: "),
        (lambda t: t + '\n[generate.v]\nkind = "vectors"\n', "[generate.v] lacks "),
        (lambda t: t.replace('name = "trec_sample"', 'name = "default"'), "study name 'default' is the namespace"),
        (lambda t: t + "\n[[", "is not valid TOML"),
    ],
)
def test_a_bad_protocol_is_one_error_naming_the_file_and_table(tmp_path, edit, expected):
    from rankhouse.errors import RankhouseError
    from rankhouse.paths import STUDIES_DIR
    from rankhouse.study import Protocol

    path = tmp_path / "p.toml"
    path.write_text(edit((STUDIES_DIR / "trec_sample.toml").read_text()))
    with pytest.raises(RankhouseError) as err:
        Protocol.load(path)
    assert str(err.value).startswith(f"protocol {path}") and expected in str(err.value), str(err.value)
