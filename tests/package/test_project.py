"""An analyst's own project (issue 35, docs/projects.md): `rankhouse init`, its models read beside
rankhouse's with --project or from its folder (a name clash an error naming both files), its studies
(protocols, and a writer of its own plugged in through the registry), and `rankhouse test`: each
model on a fixture, compared with an expected file; a diff on failure, --update, and one error line
for a broken fixture. The same, from the installed wheel: tests/package/test_wheel.py."""

from __future__ import annotations

import csv
import hashlib
import shutil
from pathlib import Path

import pytest
from analyst_project import FIRST_RELEVANT, JUDGED, first_relevant, judged_csv
from clirunner import LEAVES, error_line, rankhouse_in_process
from conftest import TREC


@pytest.fixture
def project(tmp_path):
    """A new project (rankhouse init) with the first_relevant_rank measure and its fixture, not yet run."""
    root = tmp_path / "my_measures"
    done = rankhouse_in_process("init", root)
    assert done.returncode == 0, done.stderr
    (root / "models" / "metrics").mkdir()
    (root / "models" / "metrics" / "first_relevant_rank.sql").write_text(FIRST_RELEVANT)
    fixture = root / "tests" / "first_relevant"
    (fixture / "inputs").mkdir(parents=True)
    (fixture / "fixture.toml").write_text('description = "two systems, two queries"\nmodels = "first_relevant_rank"\n')
    (fixture / "inputs" / "models.judged_ranking.csv").write_text(judged_csv(JUDGED))
    return root


def expected_rows(path: Path) -> list[list[str]]:
    with path.open(newline="") as handle:
        return list(csv.reader(handle))


# -- the project ------------------------------------------------------------------------------------
def test_init_lays_out_a_project_once(tmp_path):
    root = tmp_path / "mine"
    done = rankhouse_in_process("init", root)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in root.iterdir()) == ["README.md", "models", "rankhouse_project.toml", "studies",
                                                       "tests"]  # fmt: skip
    assert (root / "rankhouse_project.toml").read_text() == '[project]\nname = "mine"\n'
    line = error_line(rankhouse_in_process("init", root))
    assert line == f"error: {root} is a project already ({root / 'rankhouse_project.toml'})"
    assert error_line(rankhouse_in_process("init", tmp_path / "9lives")).startswith("error: project name '9lives'")


def test_the_projects_models_are_read_beside_rankhouses_with_project_or_in_its_folder(project, monkeypatch):
    done = rankhouse_in_process("models", "show", "first_relevant_rank", "--project", project)
    assert done.returncode == 0, done.stderr
    assert "my_measures/models/metrics/first_relevant_rank.sql" in done.stdout
    assert "models.judged_ranking" in done.stdout or "judged_ranking" in done.stdout
    listed = rankhouse_in_process("models", "list", "--project", project)
    assert "first_relevant_rank" in listed.stdout and "measure_ap" in listed.stdout
    # outside the project, without --project: rankhouse's own models only
    monkeypatch.chdir(project.parent)
    assert error_line(rankhouse_in_process("models", "show", "first_relevant_rank")).startswith(
        "error: no model named 'first_relevant_rank'"
    )
    monkeypatch.chdir(project)  # in its folder, the project is the current one
    done = rankhouse_in_process("models", "show", "first_relevant_rank")
    assert done.returncode == 0 and "first_relevant_rank" in done.stdout, done.stderr


# The commands that read no model: loads, run files, the encoder, reports (from an output folder), init.
READ_NO_MODEL = {"load run", "load qrels", "load qrels-jg", "load prefs", "load qrels-prefs", "load zscores",
                 "load documents", "load queries", "load document-classes", "load query-classes", "runs list",
                 "runs export", "runs validate", "lanes export", "sources", "encode", "report", "init"}  # fmt: skip


def test_every_command_that_reads_models_takes_project():
    options = {" ".join(path): {o for p in command.params for o in p.opts} for path, command in LEAVES}
    assert {command for command, given in options.items() if "--project" not in given} == READ_NO_MODEL


def test_a_model_that_takes_the_name_of_one_of_rankhouses_is_an_error_naming_both_files(project):
    from rankhouse.paths import MODELS_DIR

    mine = project / "models" / "measure_ap.sql"
    mine.write_text(FIRST_RELEVANT.replace("first_relevant_rank", "measure_ap"))
    line = error_line(rankhouse_in_process("models", "list", "--project", project))
    assert line == f"error: model measure_ap: defined twice: {MODELS_DIR / 'metrics' / 'measure_ap.sql'} and {mine}"
    mine.unlink()
    (project / "models" / "columns.toml").write_text('qid = "mine"\n')
    line = error_line(rankhouse_in_process("models", "list", "--project", project))
    assert line == (f"error: model columns.toml: qid is defined twice: in {MODELS_DIR / 'columns.toml'} "
                    f"and in {project / 'models' / 'columns.toml'}")  # fmt: skip


def test_project_option_and_project_file_errors(project, tmp_path, monkeypatch):
    line = error_line(rankhouse_in_process("models", "list", "--project", tmp_path / "nope"))
    assert line.startswith("error: invalid value for '--project': no such folder"), line
    line = error_line(rankhouse_in_process("test", "--project", tmp_path))
    assert "holds no rankhouse_project.toml, so it is not a project" in line
    (project / "rankhouse_project.toml").write_text('[project]\nname = "my_measures"\ncolour = "red"\n')
    monkeypatch.chdir(project)  # the current folder's project file: an error of its own, not of an option
    assert (
        error_line(rankhouse_in_process("test"))
        == f"error: {project / 'rankhouse_project.toml'}:3: unknown key project.colour"
    )
    (project / "rankhouse_project.toml").write_text('[project]\nname = "my_measures"\nmodules = ["nope.py"]\n')
    assert error_line(rankhouse_in_process("test")).endswith(f"modules: no file {project / 'nope.py'}")
    monkeypatch.chdir(tmp_path)
    assert error_line(rankhouse_in_process("test")) == (
        "error: no project here (no rankhouse_project.toml in this folder): give --project DIR, or fixture folders"
    )


def test_a_projects_module_that_fails_is_an_error_naming_its_file_and_line(project):
    (project / "studies" / "broken.py").write_text('WRITERS = {}\nraise ValueError("no writer here")\n')
    marker = project / "rankhouse_project.toml"
    marker.write_text(marker.read_text() + 'modules = ["studies/broken.py"]\n')
    line = error_line(rankhouse_in_process("models", "list", "--project", project))
    broken = project / "studies" / "broken.py"
    assert line == f"error: {broken}:2: the project's module failed on import: ValueError: no writer here"


# -- rankhouse test -------------------------------------------------------------------------------
def test_rankhouse_test_passes_fails_with_a_diff_and_update_rewrites(project, monkeypatch):
    monkeypatch.chdir(project)
    expected = project / "tests" / "first_relevant" / "first_relevant_rank.csv"
    done = rankhouse_in_process("test")
    assert done.returncode == 1, done.stderr
    assert (
        done.stdout.splitlines()[1]
        == f"        no expected file {expected.relative_to(project)} (rankhouse test --update writes it)"
    )
    done = rankhouse_in_process("test", "--update")
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "0 passed, 1 written")
    assert expected_rows(expected) == [["study", "system", "query", "first_relevant"], *first_relevant(JUDGED)]
    done = rankhouse_in_process("test")
    assert (done.returncode, done.stdout) == (0, "passed  tests/first_relevant: first_relevant_rank\n1 passed\n")
    # broken on purpose: a value changed, a row removed, a row added
    rows = expected_rows(expected)
    rows[1][3], removed = "2", rows.pop(2)
    rows.append(["s", "c", "q9", "7"])
    with expected.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    done = rankhouse_in_process("test")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "failed  tests/first_relevant: first_relevant_rank",
        "        tests/first_relevant/first_relevant_rank.csv differs from the model's output:",
        "          row (study=s, system=a, query=q1): first_relevant expected 2, got 3",
        "          missing row (study=s, system=c, query=q9): expected first_relevant=7",
        f"          unexpected row (study=s, system={removed[1]}, query={removed[2]}): first_relevant={removed[3]}",
        "0 passed, 1 failed",
    ]
    done = rankhouse_in_process("test", "--update")
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "0 passed, 1 updated")
    assert expected_rows(expected) == [["study", "system", "query", "first_relevant"], *first_relevant(JUDGED)]


def test_a_toml_input_and_a_model_that_fails_its_audit_on_the_fixture(project, monkeypatch):
    monkeypatch.chdir(project)
    fixture = project / "tests" / "first_relevant"
    (fixture / "inputs" / "models.judged_ranking.csv").unlink()
    tables = [f'[[rows]]\nstudy = "s"\nsystem = "{r[1]}"\nquery = "{r[2]}"\nrank = {r[3]}\ngrade = {r[4]}\n'
              f"relevant = {str(r[5]).lower()}\n" for r in JUDGED]  # fmt: skip
    (fixture / "inputs" / "models.judged_ranking.toml").write_text("\n".join(tables))
    assert rankhouse_in_process("test", "--update").returncode == 0
    assert expected_rows(fixture / "first_relevant_rank.csv")[1:] == first_relevant(JUDGED)
    text = "\n".join(tables) + "\n"
    (fixture / "inputs" / "models.judged_ranking.toml").write_text(text + '[[rows]]\nrank = "x"\n')
    line = error_line(rankhouse_in_process("test"))
    at = len(text.splitlines()) + 1  # the line of the last [[rows]]
    assert (
        line == f"error: tests/first_relevant/inputs/models.judged_ranking.toml:{at}: column rank: 'x' is not a BIGINT"
    )
    (fixture / "inputs" / "models.judged_ranking.toml").write_text(
        tables[0].replace("rank = 1", "rank = 0").replace("false", "true")
    )
    done = rankhouse_in_process("test")
    assert done.returncode == 1
    audit = "model first_relevant_rank: audit accepted_range(first_relevant, 1, ) failed"
    assert f"the fixture's models are not built: {audit}" in done.stdout


def test_rows_standing_in_for_a_prepare_model_and_a_label_table(project, monkeypatch):
    """models.rankings (prepare) and gate.qrels given: the staging judgments, judged_ranking and the
    measure are built from them; the oracle reads the same rows."""
    monkeypatch.chdir(project)
    fixture = project / "tests" / "first_relevant"
    (fixture / "inputs" / "models.judged_ranking.csv").unlink()
    rankings = [("a", "q1", "d1", 1), ("a", "q1", "d2", 2), ("a", "q2", "d3", 1), ("a", "q2", "d1", 2),
                ("b", "q1", "d2", 1), ("b", "q2", "d4", 1)]  # fmt: skip
    qrels = {("q1", "d2"): 1, ("q1", "d1"): 0, ("q2", "d1"): 2, ("q2", "d4"): 0}
    (fixture / "inputs" / "models.rankings.csv").write_text(
        "study,system,query_key,doc_key,rank\n" + "".join(f"eval,{s},{q},{d},{r}\n" for s, q, d, r in rankings)
    )
    (fixture / "inputs" / "gate.qrels.csv").write_text(
        "qid,iter,docno,rel,line\n" + "".join(f"{q},0,{d},{rel},{n}\n" for n, ((q, d), rel) in enumerate(qrels.items()))
    )
    judged = [("eval", s, q, r, qrels[(q, d)], qrels[(q, d)] >= 1) for s, q, d, r in rankings if (q, d) in qrels]
    done = rankhouse_in_process("test", "--update")
    assert done.returncode == 0, done.stdout + done.stderr
    assert expected_rows(fixture / "first_relevant_rank.csv")[1:] == first_relevant(judged)
    (fixture / "inputs" / "gate.qrels.csv").write_text("qid,iter,docno,rel,line\nq1,0,d2,,0\n")
    line = error_line(rankhouse_in_process("test"))
    assert line.startswith("error: tests/first_relevant/inputs/gate.qrels.csv: breaks a rule of gate.qrels (")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda f: (f / "inputs" / "models.judged_ranking.csv").write_text("study,system\ns,a,q1\n"),
         "tests/first_relevant/inputs/models.judged_ranking.csv:2: has 3 fields, the header 2"),
        (lambda f: (f / "inputs" / "models.judged_ranking.csv").write_text('study,system\ns,"a\n'),
         "tests/first_relevant/inputs/models.judged_ranking.csv:2: is not valid CSV (unexpected end of data)"),
        (lambda f: (f / "inputs" / "models.judged_ranking.csv").write_text("study,grde\ns,1\n"),
         "tests/first_relevant/inputs/models.judged_ranking.csv:1: column grde is not a column of "
         "models.judged_ranking; did you mean 'grade'? (its columns: study, system, query, rank, grade, relevant)"),
        (lambda f: (f / "inputs" / "models.judged_ranking.csv").write_text("study,rank\ns,1\ns,2.5\n"),
         "tests/first_relevant/inputs/models.judged_ranking.csv:3: column rank: '2.5' is not a BIGINT"),
        (lambda f: (f / "inputs" / "models.judged_ranking.csv").rename(f / "inputs" / "models.judged_rankin.csv"),
         "tests/first_relevant/inputs/models.judged_rankin.csv: models.judged_rankin is no model; did you mean "
         "'judged_ranking'?"),
        (lambda f: (f / "inputs" / "raw.runs.csv").write_text("run_id\na\n"),
         "tests/first_relevant/inputs/raw.runs.csv: no model the fixture builds reads raw.runs (it builds "
         "first_relevant_rank; they read models.judged_ranking)"),
        (lambda f: (f / "inputs" / "raw.rnus.csv").write_text("run_id\na\n"),
         "tests/first_relevant/inputs/raw.rnus.csv: raw.rnus is no table of the warehouse; did you mean 'runs'? "
         "(sql/warehouse.sql declares them)"),
        (lambda f: (f / "inputs" / "judged.csv").write_text("x\n"),
         "tests/first_relevant/inputs/judged.csv: an input is named <schema>.<table>.csv or .toml, schema raw, gate "
         "or models (e.g. inputs/models.rankings.csv)"),
        (lambda f: shutil.rmtree(f / "inputs"),
         "tests/first_relevant: no inputs/ folder: a fixture gives the tables its models read, one file each "
         "(inputs/raw.runs.csv, inputs/models.rankings.csv, ...)"),
        (lambda f: (f / "old_name.csv").write_text("x\n"),
         "tests/first_relevant/old_name.csv: is the expected output of no model the fixture tests "
         "(first_relevant_rank) (remove it, or add its model to models in fixture.toml)"),
        (lambda f: (f / "fixture.toml").write_text('models = "first_relevant_rank"\n[parameters]\nrelevance_levl = 2'),
         "tests/first_relevant/fixture.toml:3: no model declares parameter relevance_levl; did you mean "
         "'relevance_level'?"),
        (lambda f: (f / "fixture.toml").write_text('models = "first_relevant_rnk"\n'),
         "tests/first_relevant/fixture.toml:1: no model first_relevant_rnk; did you mean 'first_relevant_rank'?"),
        (lambda f: (f / "fixture.toml").write_text('models = "judged_ranking first_relevant_rank"\n'),
         "tests/first_relevant/fixture.toml:1: tests judged_ranking, which inputs/models.judged_ranking gives"),
        (lambda f: (f / "fixture.toml").unlink(), "tests: holds no fixture (a folder with fixture.toml, its inputs/ "
         "and expected files: docs/projects.md)"),
    ],
)  # fmt: skip
def test_a_broken_fixture_is_one_error_line_naming_file_line_and_rule(project, monkeypatch, edit, expected):
    monkeypatch.chdir(project)
    edit(project / "tests" / "first_relevant")
    assert error_line(rankhouse_in_process("test", "--update")) == f"error: {expected}"
    assert not (project / "tests" / "first_relevant" / "first_relevant_rank.csv").exists()  # nothing written


def test_a_missing_fixture_folder_is_an_error(project, monkeypatch):
    monkeypatch.chdir(project)
    assert error_line(rankhouse_in_process("test", "tests/nope")) == (
        "error: tests/nope: no such fixture or folder of fixtures"
    )


# -- the project's studies ------------------------------------------------------------------------
WRITER = '''\
"""The first-relevant study's writer: the TREC writer's files, and first_relevant.csv."""
from rankhouse.registry import Writer, register
from rankhouse.study import trec
from rankhouse.study.writing import write_csv

register(Writer("first_relevant", __name__))
table = trec.table


def write(study, evaluation, out):
    rows = study.wh.sql("SELECT system, query, first_relevant FROM results.first_relevant_rank "
                        "WHERE freeze_id = ? ORDER BY ALL", [evaluation.freeze.freeze_id])
    return trec.write(study, evaluation, out) + [
        write_csv(out / "first_relevant.csv", ["system", "query", "first_relevant"], rows)]
'''


def trec_first_relevant(run: Path, qrels: Path) -> list[list[str]]:
    """The oracle over trec_eval's files: each run ranked as trec_eval ranks it (score descending, then
    docno descending), the rank of each topic's first document of relevance >= 1."""
    relevant = {(q, d) for q, _, d, rel in (line.split() for line in qrels.read_text().splitlines()) if int(rel) >= 1}
    by_topic: dict[str, list[tuple[float, str]]] = {}
    for line in run.read_text().splitlines():
        qid, _, docno, _, score, _ = line.split()
        by_topic.setdefault(qid, []).append((float(score), docno))
    found = []
    for qid, docs in by_topic.items():
        ranked = sorted(docs, reverse=True)
        ranks = [n for n, (_, docno) in enumerate(ranked, start=1) if (qid, docno) in relevant]
        if ranks:
            found.append([run.name, qid, str(ranks[0])])
    return found


def test_a_projects_study_runs_its_models_and_its_own_writer(project, tmp_path, monkeypatch):
    data = project / "data"
    data.mkdir()
    for name in ("results.test", "qrels.test"):
        shutil.copy(TREC / name, data / name)
    digest = {name: hashlib.sha256((data / name).read_bytes()).hexdigest() for name in ("results.test", "qrels.test")}
    (project / "studies" / "first_relevant.toml").write_text(f"""\
[study]
name = "first_relevant"

[inputs.run]
path = "../data/results.test"
sha256 = "{digest["results.test"]}"
loader = "trec.run"

[inputs.qrels]
path = "../data/qrels.test"
sha256 = "{digest["qrels.test"]}"
loader = "trec.qrels"

[parameters]
measures = ["RR"]

[stages]
prepare = "run_ranking measure_requests"
evaluate = "+run_measures +first_relevant_rank"

[outputs]
writer = "first_relevant"
""")
    (project / "studies" / "first_relevant_writer.py").write_text(WRITER)
    marker = project / "rankhouse_project.toml"
    marker.write_text(marker.read_text() + 'modules = ["studies/first_relevant_writer.py"]\n')
    db, out = tmp_path / "w.duckdb", tmp_path / "out"
    line = error_line(rankhouse_in_process("study", "run", project / "studies" / "first_relevant.toml", "--db", db))
    assert line == (f"error: protocol {project / 'studies' / 'first_relevant.toml'} is a study of the project in "
                    f"{project} (its rankhouse_project.toml), whose models it reads: run it with --project "
                    f"{project} or from that folder")  # fmt: skip
    assert not db.exists()
    monkeypatch.chdir(project)
    done = rankhouse_in_process("study", "run", "studies/first_relevant.toml", "--db", db, "--out", out)
    assert done.returncode == 0, done.stderr
    with (out / "first_relevant.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    expected = trec_first_relevant(TREC / "results.test", TREC / "qrels.test")
    assert rows[0] == ["system", "query", "first_relevant"] and rows[1:] == sorted(expected) and len(expected) >= 2
    # RR, rankhouse's measure, is the reciprocal of the project's first relevant rank on every topic
    per_query = {(r["run_id"], r["qid"]): float(r["value"]) for r in csv.DictReader((out / "per_query.csv").open())}
    assert {(run, qid): 1 / int(rank) for run, qid, rank in expected} == {
        key: value for key, value in per_query.items() if value > 0
    }
