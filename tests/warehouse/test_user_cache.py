"""What rankhouse keeps between processes in the user's cache (rankhouse/user_cache.py, issue 39): the models'
analyses (rankhouse/warehouse/analysis.py: what a model's SQL reads and its canonical text, for its
parameters) and the digests seeded plans were seen to have (rankhouse/resample.py). An entry is named by
everything it is computed from, so a changed model file, parameter, macro, seed or rankhouse version is
computed afresh; an entry that is damaged, foreign or of another key is ignored (and written again), never
an error and never a wrong answer; a cache folder that cannot be written only loses the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from model_files import model

import rankhouse
from rankhouse import resample, user_cache
from rankhouse.errors import ModelError
from rankhouse.warehouse import Warehouse, analysis
from rankhouse.warehouse.dag import Project, table_references
from rankhouse.warehouse.render import canonical_sql, parse, render
from rankhouse.warehouse.runner import Runner


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:  # the models' entries
    """A cache folder of the test's own, and no analysis kept in this process's memory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(analysis, "_memory", {})
    return tmp_path / "cache" / "rankhouse" / "models"


@pytest.fixture
def models(tmp_path) -> Path:
    root = tmp_path / "models"
    model(root, "runs", "SELECT run_id, score FROM raw.runs")
    model(root, "top", "SELECT run_id FROM models.runs WHERE score > {{ cutoff }}", parameters="cutoff = 1")
    return root


def entries(cache: Path) -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(cache.glob("*.json"))}


def fresh(project: Project, name: str) -> tuple[set[str], str]:
    """What the analysis must be: the model rendered with the project's parameters and parsed now, without
    the cache."""
    found = project.models[name]
    tree = parse(found, render(found, project.params))
    return table_references(found, tree) | {d.lower() for d in found.depends_on}, canonical_sql(tree)


def test_an_analysis_is_kept_and_read_back_without_rendering(cache, models, monkeypatch):
    first = Project.load(models)
    assert sorted(entries(cache)) and all(e["key"] == k for k, e in entries(cache).items())
    monkeypatch.setattr(analysis, "_memory", {})

    def refuse(*args, **kwargs):
        raise AssertionError("rendered again")

    monkeypatch.setattr(analysis, "_compute", refuse)
    again = Project.load(models)
    assert again.references == first.references == {"runs": {"raw.runs"}, "top": {"models.runs"}}


def test_a_changed_model_file_is_analysed_afresh(cache, models):
    assert Project.load(models).references["top"] == {"models.runs"}
    model(models, "top", "SELECT run_id FROM raw.runs WHERE score > {{ cutoff }}", parameters="cutoff = 1")
    project = Project.load(models)
    assert project.references["top"] == {"raw.runs"} == fresh(project, "top")[0]
    assert analysis.analysed(project.models["top"], {}).canonical == fresh(project, "top")[1]


def test_a_changed_macro_file_names_another_entry(cache, models, monkeypatch, tmp_path):
    project = Project.load(models)
    before = analysis.entry_key(project.models["top"], {"cutoff": 1})
    macros = tmp_path / "sql" / "macros"
    macros.mkdir(parents=True)
    (macros / "extra.sql").write_text("{% macro extra() %}1{% endmacro %}\n")
    monkeypatch.setattr(analysis, "SQL_DIR", tmp_path / "sql")
    analysis.macros.cache_clear()
    try:
        assert analysis.entry_key(project.models["top"], {"cutoff": 1}) != before
    finally:
        analysis.macros.cache_clear()


def test_a_parameter_gives_its_own_entry_and_fingerprint(cache, models):
    one, two = Project.load(models, params={"cutoff": 1}), Project.load(models, params={"cutoff": 2})
    first, second = analysis.analysed(one.models["top"], one.params), analysis.analysed(two.models["top"], two.params)
    assert first.canonical == fresh(one, "top")[1] and second.canonical == fresh(two, "top")[1]
    assert first.canonical != second.canonical
    with Warehouse(":memory:") as wh:
        assert Runner(wh, one, one.params).fingerprint("top") != Runner(wh, two, two.params).fingerprint("top")
    assert len(entries(cache)) == 3  # runs, and top with each cutoff


def test_another_rankhouse_version_names_another_entry(cache, models, monkeypatch):
    project = Project.load(models)
    before = analysis.entry_key(project.models["top"], {"cutoff": 1})
    monkeypatch.setattr(rankhouse, "__version__", "0.0.0-other")
    user_cache.code_signature.cache_clear()
    try:
        assert analysis.entry_key(project.models["top"], {"cutoff": 1}) != before
        monkeypatch.setattr(analysis, "_memory", {})
        assert Project.load(models).references == project.references
        assert len(entries(cache)) == 4  # the entries of both versions
    finally:
        user_cache.code_signature.cache_clear()


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry, key: "not json {",
        lambda entry, key: "",
        lambda entry, key: json.dumps([1, 2, 3]),
        lambda entry, key: json.dumps({**entry, "key": "0" * 64}),  # another key's entry, copied in
        lambda entry, key: json.dumps({**entry, "references": "raw.other"}),
        lambda entry, key: json.dumps({**entry, "canonical": None}),
        lambda entry, key: json.dumps({k: v for k, v in entry.items() if k != "references"}),
        lambda entry, key: json.dumps({**entry, "rendered": ["SELECT 1"]}),
        lambda entry, key: json.dumps({k: v for k, v in entry.items() if k != "rendered"}),  # a format-1 entry
    ],
    ids=[
        "not-json",
        "empty",
        "a-list",
        "foreign-key",
        "references-not-a-list",
        "no-text",
        "missing-field",
        "rendered-not-text",
        "no-rendered-sql",
    ],  # fmt: skip
)
def test_a_damaged_or_foreign_entry_is_ignored_and_written_again(cache, models, monkeypatch, damage):
    expected = Project.load(models).references
    for path in cache.glob("*.json"):
        entry = json.loads(path.read_text())
        path.write_text(damage(entry, path.stem))
    monkeypatch.setattr(analysis, "_memory", {})
    project = Project.load(models)
    assert project.references == expected == {name: fresh(project, name)[0] for name in project.models}
    assert analysis.analysed(project.models["top"], {}).canonical == fresh(project, "top")[1]
    assert analysis.analysed(project.models["top"], {}).rendered == render(project.models["top"], {})
    assert all(entry["key"] == key for key, entry in entries(cache).items())  # rewritten whole


def test_a_cache_folder_that_cannot_be_written_only_loses_the_cache(tmp_path, models, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setattr(analysis, "_memory", {})
    assert Project.load(models).references["top"] == {"models.runs"}


def test_a_refused_model_is_never_kept(cache, tmp_path):
    root = tmp_path / "refused"
    model(root, "reads_a_file", "SELECT * FROM read_csv('/etc/passwd')")
    for _ in range(2):
        with pytest.raises(ModelError, match="models read only warehouse tables"):
            Project.load(root)
    assert entries(cache) == {}


def test_the_study_machinery_imports_neither_sqlglot_nor_jinja2_when_the_analyses_are_kept(tmp_path):
    """A study's models analysed once, `rankhouse study status` (its project, fingerprints and freeze) needs
    neither to be imported: what an analysis cache hit saves besides the rendering."""
    code = (
        "import sys\nfrom rankhouse.warehouse.dag import Project\nfrom rankhouse.warehouse.runner import Runner\n"
        "from rankhouse.warehouse import Warehouse\n"
        "project = Project.load(closure=['run_measures'], params={'measures': ['AP']})\n"
        "with Warehouse(':memory:') as wh:\n    Runner(wh, project, project.params).plan_fingerprint('run_measures')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlglot', 'jinja2')))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert "sqlglot" in first.stdout  # analysed afresh
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert second.stdout.split() == ["[]"]


def test_the_kept_sql_is_the_rendered_sql_that_a_build_runs(cache, models):
    project = Project.load(models, params={"cutoff": 2})
    kept = {e["rendered"] for e in entries(cache).values()}
    assert kept == {render(m, project.params) for m in project.models.values()}
    assert "score > 2" in analysis.analysed(project.models["top"], project.params).rendered


def test_an_eval_with_its_models_analysed_imports_neither_sqlglot_nor_jinja2(tmp_path):
    """The second `rankhouse eval` of a user runs every model's SQL as kept with its analysis: the same
    values, and neither jinja2 nor sqlglot imported (about 0.1 s of an eval, docs/performance.md)."""
    trec = Path(__file__).resolve().parents[1] / "fixtures" / "trec_eval"
    code = (
        "import sys\nfrom rankhouse.evaluation import evaluate\nfrom rankhouse.warehouse import Warehouse\n"
        "with Warehouse(':memory:') as wh:\n"
        f"    result = evaluate(wh, {str(trec / 'qrels.test')!r}, [{str(trec / 'results.test')!r}], ['AP', 'P.10'])\n"
        "print(result.summary, sorted({m.split('.')[0] for m in sys.modules} & {'sqlglot', 'jinja2'}))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.endswith("['jinja2', 'sqlglot']\n"), first.stdout  # analysed afresh
    assert "'AP': 0.1785" in second.stdout and second.stdout.endswith(" []\n"), second.stdout
    assert first.stdout.split("} ")[0] == second.stdout.split("} ")[0]  # the same values


# -- seeded plans -------------------------------------------------------------------------------------------


@pytest.fixture
def draws(cache, monkeypatch) -> list[int]:
    """The seeds of the bootstrap plans drawn (not kept as stored), in order."""
    seeds: list[int] = []
    original = resample.bootstrap_draws

    def spy(units, replicates, seed):  # noqa: ANN001, ANN202
        seeds.append(seed)
        return original(units, replicates, seed)

    monkeypatch.setattr(resample, "bootstrap_draws", spy)
    return seeds


def stored(wh) -> list[tuple]:  # noqa: ANN001
    return wh.sql("SELECT replicate, draw, item FROM raw.resample_plans WHERE plan = 'p' ORDER BY ALL")


def test_a_stored_plan_is_kept_without_drawing_it_again(wh, draws):
    with wh.writing_inputs():
        first = resample.store_plan(wh, "p", 5, 20, 7)
        rows = stored(wh)
        again = resample.store_plan(wh, "p", 5, 20, 7)
    assert (first.status, again.status) == ("loaded", "unchanged") and first.sha256 == again.sha256
    assert draws == [7] and stored(wh) == rows
    assert again.path == first.path  # the same source line: "generated: {spec}"


def test_another_seed_or_a_plan_stored_otherwise_is_drawn(wh, draws):
    with wh.writing_inputs():
        resample.store_plan(wh, "p", 5, 20, 7)
        assert resample.store_plan(wh, "p", 5, 20, 8).status == "loaded"
        wh.sql("UPDATE inputs.meta.sources SET sha256 = 'other' WHERE table_name = 'raw.resample_plans'")
        assert resample.store_plan(wh, "p", 5, 20, 8).status == "loaded"  # recorded otherwise: drawn and stored
    assert draws == [7, 8, 8]
    expected = np.random.default_rng(8).integers(0, 5, size=(20, 5), dtype=np.int32)
    assert stored(wh) == [(r, d, int(expected[r, d])) for r in range(20) for d in range(5)]


@pytest.mark.parametrize(
    "damage", ["not json", json.dumps({"digest": 5}), json.dumps({"key": "0" * 64, "digest": "x"})]
)
def test_a_damaged_plan_entry_is_drawn_again(wh, draws, damage):
    with wh.writing_inputs():
        first = resample.store_plan(wh, "p", 5, 20, 7)
        (entry,) = (Path(user_cache.folder_of(resample.PLANS))).glob("*.json")
        entry.write_text(damage)
        again = resample.store_plan(wh, "p", 5, 20, 7)
    assert again.status == "unchanged" and again.sha256 == first.sha256 and draws == [7, 7]
    assert json.loads(entry.read_text())["digest"] == first.sha256  # written again


def test_another_numpy_names_another_plan_entry(monkeypatch):
    spec = {"kind": "bootstrap", "units": 5, "replicates": 20, "seed": 7, "rng": "numpy PCG64"}
    before = user_cache.key_of({"spec": spec, "code": user_cache.code_signature("numpy")})
    user_cache.code_signature.cache_clear()
    monkeypatch.setattr(user_cache.os, "listdir", lambda folder: ["numpy-0.0.0.dist-info"])
    try:
        assert user_cache.key_of({"spec": spec, "code": user_cache.code_signature("numpy")}) != before
    finally:
        user_cache.code_signature.cache_clear()
