"""The model DAG: inference, checks, selection, fingerprints and skipping, audits, run log."""

from __future__ import annotations

import re

import pytest
from conftest import TREC
from model_files import model

from rankhouse.errors import AuditError, ModelError
from rankhouse.loaders import load_run
from rankhouse.warehouse.dag import Project, selection_closure
from rankhouse.warehouse.memory import PERFECT_HASH_DEFAULT_BITS, perfect_hash_bits
from rankhouse.warehouse.runner import Runner


@pytest.fixture
def chain(tmp_path):
    """runs_per_id <- doubled <- summary, and a separate model `other`."""
    model(tmp_path, "runs_per_id", "SELECT run_id, count(*) AS n FROM raw.runs GROUP BY run_id")
    model(
        tmp_path,
        "doubled",
        "WITH base AS (SELECT run_id, n FROM models.runs_per_id) SELECT run_id, n * {{ factor }} AS n FROM base",
        parameters="factor = 2",
    )
    model(tmp_path, "summary", "SELECT run_id, n FROM models.doubled", group="h")
    model(tmp_path, "other", "SELECT DISTINCT run_id FROM raw.runs")
    return tmp_path


def test_dependencies_are_inferred_and_ctes_excluded(chain):
    project = Project.load(chain)
    assert project.parents == {"doubled": ["runs_per_id"], "other": [], "runs_per_id": [], "summary": ["doubled"]}
    assert project.references["doubled"] == {"models.runs_per_id"}
    assert project.references["runs_per_id"] == {"raw.runs"}
    assert project.children["runs_per_id"] == ["doubled"]
    assert project.order.index("runs_per_id") < project.order.index("doubled") < project.order.index("summary")


def test_depends_on_adds_what_parsing_cannot_see(chain):
    model(chain, "late", "SELECT run_id FROM raw.runs", extra="-- depends_on: models.summary")
    assert Project.load(chain).parents["late"] == ["summary"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT run_id FROM models.missing", "reads unknown model models.missing"),
        ("SELECT run_id FROM raw.nothing", "reads unknown table raw.nothing"),
        ("SELECT run_id FROM runs", "neither a CTE nor schema-qualified"),
        ("SELECT * FROM read_csv('labels.csv')", "reads READ_CSV"),
        ("ATTACH 'x.duckdb' AS x", "exactly one SELECT"),
        ("SELECT 1 AS run_id; SELECT 2 AS run_id", "exactly one SELECT"),
        ("SELECT run_id FROM other.main.t", "names a database"),
    ],
)
def test_bad_references_name_the_model(tmp_path, sql, message):
    model(tmp_path, "bad", sql)
    with pytest.raises(ModelError, match=message) as err:
        Project.load(tmp_path)
    assert err.value.model == "bad"


def test_only_staging_models_read_inputs_and_labels(tmp_path):
    model(tmp_path, "sneaky", "SELECT run_id FROM raw.runs", group="retrieval")
    with pytest.raises(ModelError, match=r"reads raw.runs: only models in models/staging/ \(or a study's "
                                         r"models/<study>/staging/\) read") as err:  # fmt: skip
        Project.load(tmp_path)
    assert err.value.model == "sneaky"
    (tmp_path / "retrieval" / "sneaky.sql").unlink()
    model(tmp_path, "sneaky", "SELECT run_id FROM raw.runs", group="retrieval/staging")  # a study's own adapter
    assert Project.load(tmp_path).models["sneaky"].group == "retrieval/staging"


def test_a_model_reading_labels_is_a_table(tmp_path):
    model(tmp_path, "peek", "SELECT qid AS run_id FROM gate.qrels", stage="evaluate", extra="-- materialized: view")
    with pytest.raises(ModelError, match=r"reads labels \(gate.qrels\) but is a view"):
        Project.load(tmp_path)


def test_cycles_are_errors_naming_the_models(tmp_path):
    model(tmp_path, "a", "SELECT run_id FROM models.b")
    model(tmp_path, "b", "SELECT run_id FROM models.a")
    model(tmp_path, "c", "SELECT run_id FROM raw.runs")
    with pytest.raises(ModelError, match="cycle among a, b"):
        Project.load(tmp_path)


def test_prepare_models_cannot_read_labels(tmp_path):
    model(tmp_path, "peek", "SELECT qid AS run_id FROM gate.qrels")
    with pytest.raises(ModelError, match="prepare model and may not read labels"):
        Project.load(tmp_path)
    model(tmp_path, "peek", "SELECT qid AS run_id FROM gate.qrels", stage="evaluate")
    model(tmp_path, "launder", "SELECT run_id FROM models.peek")
    with pytest.raises(ModelError, match="prepare model but reads evaluate model"):
        Project.load(tmp_path)


@pytest.mark.parametrize(
    ("header_edit", "message"),
    [
        (("-- stage: prepare", "-- stage: later"), "stage must be one of"),
        (("-- audits: not_null(run_id); unique_grain", "-- audits: looks_fine"), "unknown audit"),
        (("-- name: x", "-- name: y"), "must equal the file name"),
        (("-- version: 1\n", ""), "header lacks version"),
        (("-- version: 1\n", "-- version: 1\n-- aggregate: sorted\n"), "aggregate must be one of"),
    ],
)
def test_header_errors(tmp_path, header_edit, message):
    path = model(tmp_path, "x", "SELECT run_id FROM raw.runs")
    path.write_text(path.read_text().replace(*header_edit))
    with pytest.raises(ModelError, match=message):
        Project.load(tmp_path)


def test_parameter_defaults_must_agree(tmp_path):
    model(tmp_path, "a", "SELECT run_id, {{ k }} AS k FROM raw.runs", parameters="k = 1")
    model(tmp_path, "b", "SELECT run_id, {{ k }} AS k FROM raw.runs", parameters="k = 2")
    with pytest.raises(ModelError, match="declares k = 2 but a declares k = 1"):
        Project.load(tmp_path)


def test_undeclared_parameter_is_an_error(tmp_path):
    model(tmp_path, "a", "SELECT run_id, {{ secret }} AS k FROM raw.runs")
    with pytest.raises(ModelError, match="does not declare"):
        Project.load(tmp_path)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, ["other", "runs_per_id", "doubled", "summary"]),
        ("doubled", ["doubled"]),
        ("+doubled", ["runs_per_id", "doubled"]),
        ("doubled+", ["doubled", "summary"]),
        ("+doubled+", ["runs_per_id", "doubled", "summary"]),
        ("summary, other", ["other", "summary"]),
        ("group:h", ["summary"]),
        ("stage:prepare", ["other", "runs_per_id", "doubled", "summary"]),
    ],
)
def test_selection_syntax(chain, spec, expected):
    assert Project.load(chain).select(spec) == expected


def test_a_closure_holds_the_models_named_and_all_they_read(chain):
    model(chain, "late", "SELECT run_id FROM raw.runs", extra="-- depends_on: models.summary")
    project = Project.load(chain, closure=["late"])
    assert sorted(project.models) == ["doubled", "late", "runs_per_id", "summary"]  # not `other`
    assert project.select("+late") == Project.load(chain).select("+late")
    with pytest.raises(ModelError, match="no such model"):
        Project.load(chain, closure=["nope"])


def test_a_closure_is_checked_like_the_whole_project(tmp_path):
    model(tmp_path, "reader", "SELECT run_id FROM models.missing")
    with pytest.raises(ModelError, match="reads unknown model models.missing"):
        Project.load(tmp_path, closure=["reader"])


def test_the_measure_closure_gives_the_measure_models_the_whole_project_gives():
    whole, closure = Project.load(), Project.load(closure=["run_measures"])
    assert closure.select("+run_measures") == whole.select("+run_measures")
    assert all(closure.parents[name] == whole.parents[name] for name in closure.models)
    assert len(closure.models) < len(whole.models) / 3


@pytest.mark.parametrize(
    ("spec", "closure"),
    [
        ("+bm25_ranking", ["bm25_ranking"]),
        ("+late, summary +late", ["late", "summary"]),
        ("summary+", None),
        ("+late stage:prepare", None),
        ("group:h", None),
        (None, None),
        ("", None),
    ],
)
def test_a_selection_loads_the_closure_of_its_names_or_the_whole_project(spec, closure):
    assert selection_closure(spec) == closure


def test_rankhouse_run_selections_select_from_their_closure_what_they_select_from_the_whole_project(chain):
    model(chain, "late", "SELECT run_id FROM raw.runs", extra="-- depends_on: models.summary")
    whole = Project.load(chain)
    for spec in ["+late", "+summary, other", "doubled +runs_per_id"]:
        assert Project.load(chain, closure=selection_closure(spec)).select(spec) == whole.select(spec)
    bm25 = Project.load(closure=selection_closure("+bm25_ranking"))
    assert bm25.select("+bm25_ranking") == Project.load().select("+bm25_ranking")


def test_only_the_models_of_the_requested_measures_are_built():
    """query_measures reads the measure models of the requested families only (measures.measure_models):
    a measure nobody asked for is not computed."""
    ap = set(Project.load(params={"measures": ["AP", "GMAP"]}, closure=["run_measures"]).models)
    assert {"measure_ap", "relevant_counts", "judged_ranking"} <= ap
    assert not ap & {"measure_ndcg", "ideal_ranking", "measure_bpref", "measure_counts", "retrieved_counts"}
    ndcg = set(Project.load(params={"measures": ["nDCG_exp@5", "NumRet"]}, closure=["run_measures"]).models)
    assert {"measure_ndcg", "ideal_ranking", "measure_counts", "retrieved_counts"} <= ndcg
    assert "measure_ap" not in ndcg


def test_selecting_an_unknown_model_is_an_error(chain):
    with pytest.raises(ModelError, match="no such model"):
        Project.load(chain).select("+nope")


def statuses(results) -> dict[str, str]:
    return {r.model: r.status for r in results}


def test_only_statements_computing_an_array_aggregate_raise_the_perfect_hash_threshold(wh, tmp_path, monkeypatch):
    """`aggregate: array` raises DuckDB's perfect_ht_threshold for the statements that compute the
    model: its own build, or for a view the builds of the tables that read it. Raised warehouse-wide,
    every small GROUP BY over wide-ranging ids would allocate the whole array. (Seen from outside the
    models: a model may not read a setting, whose value is no part of its inputs.)"""
    load_run(wh, TREC / "results.test")
    model(tmp_path, "summed", "SELECT run_id, count(*) AS n FROM raw.runs GROUP BY run_id",
          extra="-- materialized: view\n-- aggregate: array")  # fmt: skip
    model(tmp_path, "reader", "SELECT run_id, n FROM models.summed")
    model(tmp_path, "own", "SELECT run_id, count(*) AS n FROM raw.runs GROUP BY run_id", extra="-- aggregate: array")
    model(tmp_path, "plain", "SELECT run_id FROM models.own")
    # built after the view, not reading it (bm25_ranking and bm25_scores): not computed by its statement
    model(tmp_path, "after", "SELECT DISTINCT run_id FROM raw.runs", extra="-- depends_on: models.summed")
    project = Project.load(tmp_path)
    seen: dict[str, int] = {}
    run = wh.sql

    def spied(query, params=None):  # the threshold in force when each model's CREATE runs
        if query.startswith("CREATE OR REPLACE"):
            found = re.search(r'models\."(\w+)" AS|main\."(\w+?)__[0-9a-f]{64}"', query)
            built = found.group(1) or found.group(2)
            # the first CREATE computes the model; a table model's view of its store table comes after
            seen.setdefault(built, int(run("SELECT current_setting('perfect_ht_threshold')")[0][0]))
        return run(query, params)

    monkeypatch.setattr(wh, "sql", spied)
    Runner(wh, project).run(project.select(None))
    raised = perfect_hash_bits(wh.con)
    assert 12 < raised <= 26  # this machine has the memory for more than DuckDB's default
    computes = [project.computes_array_aggregate(m) for m in ("reader", "own", "plain", "after")]
    assert computes == [True, True, False, False]
    assert "summed" in project.parents["after"]  # built after it all the same
    assert seen["reader"] == seen["own"] == raised
    assert (
        seen["summed"] == seen["plain"] == seen["after"] == PERFECT_HASH_DEFAULT_BITS
    )  # a view: not computed when made
    assert run("SELECT current_setting('perfect_ht_threshold')") == [(PERFECT_HASH_DEFAULT_BITS,)]


def test_unchanged_models_are_skipped_and_changes_rebuild(wh, chain, tmp_path):
    load_run(wh, TREC / "results.test")
    project = Project.load(chain)
    names = project.select(None)
    assert set(statuses(Runner(wh, project).run(names)).values()) == {"built"}
    assert set(statuses(Runner(wh, project).run(names)).values()) == {"skipped"}
    # a new parameter value rebuilds the model that uses it and its descendants only
    changed = statuses(Runner(wh, project, {"factor": 3}).run(names))
    assert changed == {"other": "skipped", "runs_per_id": "skipped", "doubled": "built", "summary": "built"}
    assert wh.sql("SELECT n FROM models.summary") == [(4500,)]
    # new data rebuilds everything that reads it
    load_run(wh, TREC / "results.trunc")
    assert set(statuses(Runner(wh, project, {"factor": 3}).run(names)).values()) == {"built"}


def test_comments_and_layout_do_not_change_the_fingerprint_but_sql_does(wh, chain):
    load_run(wh, TREC / "results.test")
    before = Runner(wh, Project.load(chain)).fingerprint("other")
    path = chain / "staging" / "other.sql"
    path.write_text(path.read_text().replace("SELECT DISTINCT", "-- a comment\nSELECT   DISTINCT\n"))
    assert Runner(wh, Project.load(chain)).fingerprint("other") == before
    path.write_text(path.read_text().replace("run_id FROM raw.runs", "run_id, 1 AS one FROM raw.runs"))
    assert Runner(wh, Project.load(chain)).fingerprint("other") != before


def test_a_child_needs_its_parents_built(wh, chain):
    load_run(wh, TREC / "results.test")
    with pytest.raises(ModelError, match=r"needs doubled.*select \+summary"):
        Runner(wh, Project.load(chain)).run(["summary"])


def test_model_runs_are_logged(wh, chain):
    load_run(wh, TREC / "results.test")
    project = Project.load(chain)
    Runner(wh, project).run(["runs_per_id"])
    Runner(wh, project).run(["runs_per_id"])
    rows = wh.sql("SELECT model, status, rows, fingerprint FROM meta.model_runs ORDER BY started_at")
    fingerprint = Runner(wh, project).fingerprint("runs_per_id")
    assert rows == [("runs_per_id", "built", 1, fingerprint), ("runs_per_id", "skipped", 1, fingerprint)]


@pytest.mark.parametrize(
    ("sql", "audits", "audit", "shown"),
    [
        ("SELECT run_id, score FROM raw.runs", "unique_grain", "unique_grain", "copies=1500"),
        ("SELECT NULL AS run_id, 0 AS score", "not_null(run_id)", "not_null(run_id)", "run_id=None"),
        (
            "SELECT run_id, score FROM raw.runs",
            "accepted_range(score, 0, 2)",
            "accepted_range(score, 0, 2)",
            "score=2.1",
        ),
        ("SELECT run_id, score FROM raw.runs WHERE false", "at_least_one_row", "at_least_one_row", "row_count=0"),
    ],
)
def test_a_failing_audit_stops_the_dag_and_keeps_the_old_table(wh, tmp_path, sql, audits, audit, shown):
    load_run(wh, TREC / "results.test")
    model(tmp_path, "checked", "SELECT run_id, min(score) * 0 AS score FROM raw.runs GROUP BY run_id", audits=audits)
    model(tmp_path, "after", "SELECT run_id FROM models.checked", audits="")
    Runner(wh, Project.load(tmp_path)).run(["checked", "after"])
    model(tmp_path, "checked", sql, audits=audits)
    project = Project.load(tmp_path)
    with pytest.raises(AuditError) as err:
        Runner(wh, project).run(["checked", "after"])
    assert (err.value.model, err.value.audit) == ("checked", audit)
    assert "model checked: audit" in str(err.value) and shown in str(err.value)
    assert wh.sql("SELECT * FROM models.checked") == [("results.test", 0.0)]
    assert wh.sql("SELECT status FROM meta.model_runs WHERE model = 'checked' ORDER BY started_at") == [
        ("built",),
        ("failed",),
    ]
    assert wh.sql("SELECT count(*) FROM meta.model_runs WHERE model = 'after'") == [(1,)]


def test_unknown_parameters_are_rejected(wh, chain):
    from rankhouse.errors import RankhouseError

    with pytest.raises(RankhouseError, match="no model declares parameter"):
        Runner(wh, Project.load(chain), {"factr": 3})


def test_a_view_model_is_built_as_a_view_and_skipped_when_unchanged(wh, tmp_path):
    load_run(wh, TREC / "results.test")
    model(
        tmp_path, "ranked", "SELECT run_id, count(*) AS n FROM raw.runs GROUP BY run_id", extra="-- materialized: view"
    )
    model(tmp_path, "reader", "SELECT run_id, n FROM models.ranked")
    project = Project.load(tmp_path)
    first = Runner(wh, project).run(project.select(None))
    assert [(r.model, r.status, r.rows) for r in first] == [("ranked", "built", None), ("reader", "built", 1)]
    views = "SELECT view_name FROM duckdb_views() WHERE schema_name = 'models' AND NOT contains(sql, ' FROM store_')"
    assert wh.sql(views) == [("ranked",)]  # `reader`, a table: its store table, and a view of it
    assert statuses(Runner(wh, project).run(project.select(None))) == {"ranked": "skipped", "reader": "skipped"}
    # switching a model between view and table replaces the old object
    model(tmp_path, "ranked", "SELECT run_id, count(*) AS n FROM raw.runs GROUP BY run_id")
    Runner(wh, Project.load(tmp_path)).run(["ranked"])
    assert wh.sql(views) == []
    assert wh.sql("SELECT n FROM models.ranked") == [(1500,)]


@pytest.mark.parametrize(
    ("parity", "tolerances"),
    [
        ("within(d 1e-12, units 100000): differences of doubles", {"d": 1e-12, "units": 100000.0}),
        ("within(d 0.5): a reason", {"d": 0.5}),
        ("within(d): no amount", None),
        ("doubles(d): another form", None),
        ("within(d 1e-12)", None),  # no reason
    ],
)
def test_a_parity_header_gives_each_columns_tolerance(tmp_path, parity, tolerances):
    model(tmp_path, "loose", "SELECT run_id, 1.0 AS d FROM raw.runs", extra=f"-- parity: {parity}")
    if tolerances is None:
        with pytest.raises(ModelError, match="parity is `within"):
            Project.load(tmp_path)
    else:
        assert Project.load(tmp_path).models["loose"].tolerances == tolerances
