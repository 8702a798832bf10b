"""docs/examples/quickstart.ipynb, run by a real Jupyter kernel (nbclient, ipykernel): every cell runs, the
numbers it prints are the command line's on the same files (trec_eval's sample), and the notebook as
committed shows what it prints now. Cells are found by their tag (evaluate, frames, compare, ...)."""

from __future__ import annotations

import json

import nbformat
import pytest
from clirunner import rankhouse_in_process, stdout_of
from conftest import TREC
from nbclient import NotebookClient

from rankhouse.paths import ROOT

NOTEBOOK = ROOT / "docs" / "examples" / "quickstart.ipynb"
QRELS, TEST, TRUNC = TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc"


def shown(cell: nbformat.NotebookNode) -> dict[str, str]:
    """What a cell showed: its standard output, standard error, and the plain text of its result."""
    found = {"stdout": "", "stderr": "", "result": ""}
    for output in cell.outputs:
        if output.output_type == "stream":
            found[output.name] += output.text
        elif output.output_type == "execute_result":
            found["result"] += output.data.get("text/plain", "")
        elif output.output_type == "error":
            found["stderr"] += f"{output.ename}: {output.evalue}"
    return found


@pytest.fixture(scope="module")
def executed():
    """The notebook as committed, and as the kernel runs it now, by cell tag."""
    committed = nbformat.read(NOTEBOOK, as_version=4)
    fresh = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        fresh, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()

    def by_tag(notebook: nbformat.NotebookNode) -> dict[str, dict[str, str]]:
        cells = [c for c in notebook.cells if c.cell_type == "code"]
        return {c.metadata["tags"][0]: shown(c) for c in cells}

    return by_tag(committed), by_tag(fresh)


@pytest.fixture(scope="module")
def evaluated():
    """`rankhouse eval` of both sample runs as a Markdown table, what the notebook's first table prints."""
    return stdout_of("eval", QRELS, TEST, TRUNC, "-m", "nDCG@10", "-m", "P@10", "-m", "AP", "--format", "markdown")


def markdown_rows(text: str) -> dict[str, list[str]]:
    """A Markdown table's body rows by their first cell."""
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]
    return {row[0]: row[1:] for row in rows[2:]}


def test_every_cell_runs_and_the_committed_notebook_shows_what_it_prints(executed):
    committed, fresh = executed
    assert list(fresh) == ["setup", "evaluate", "frames", "per_query", "compare", "fuse", "error", "study",
                           "connect", "cleanup"]  # fmt: skip
    assert all(not cell["stderr"] for cell in fresh.values()), {t: c["stderr"] for t, c in fresh.items()}
    assert committed == fresh


def test_the_notebook_prints_the_numbers_of_the_command_line(executed, evaluated, tmp_path):
    _, fresh = executed
    measures = ["-m", "nDCG@10", "-m", "P@10", "-m", "AP"]
    assert fresh["evaluate"]["stdout"] == evaluated + "\n"
    # the DataFrame and the dict of dicts: results.test's row, under their names
    rows = markdown_rows(evaluated)
    assert markdown_rows(fresh["frames"]["stdout"]) == {"results.test": rows["results.test"],
                                                         "as a dict": rows["results.test"]}  # fmt: skip
    # every query's values (pandas shows six digits)
    per_query = rankhouse_in_process("eval", QRELS, TEST, *measures, "-q", "--format", "json").stdout
    expected = json.loads(per_query)["results.test"]["per_query"]
    lines = fresh["per_query"]["result"].splitlines()
    columns = lines[0].split()[1:]
    assert sorted(columns) == sorted(["nDCG@10", "P@10", "AP"])
    for line in lines[2:]:
        qid, *values = line.split()
        assert [float(v) for v in values] == pytest.approx([expected[qid][c] for c in columns], abs=5e-7)
    compared = stdout_of("compare", QRELS, TEST, TRUNC, "-m", "nDCG@10", "-m", "AP", "--format", "markdown")
    assert fresh["compare"]["stdout"] == compared  # the command prints the table with print(), as the notebook
    rankhouse_in_process("fuse", "--arm", f"test={TEST}", "--arm", f"trunc={TRUNC}", "--rule", "rrf", "--rule", "rsf",
                         "--depth", "50", "-o", tmp_path, "--db", ":memory:")  # fmt: skip
    fused = rankhouse_in_process("eval", QRELS, f"rrf={tmp_path / 'rrf.run'}", f"rsf={tmp_path / 'rsf.run'}",
                                 "-m", "nDCG@10", "-m", "AP", "--format", "markdown").stdout  # fmt: skip
    assert fresh["fuse"]["stdout"] == fused + "\n"


def test_the_notebooks_errors_and_study_are_the_command_lines(executed, evaluated, tmp_path):
    """The NaN score refused with the rule the command gives a file's line 5 (row 4 of the frame); the
    study's GateError, freeze and summary; its labels read through the verified study."""
    _, fresh = executed
    lines = TEST.read_text().splitlines()
    qid, q0, docno, rank, _, tag = lines[4].split()
    broken = tmp_path / "bm25"
    broken.write_text("\n".join([*lines[:4], f"{qid} {q0} {docno} {rank} nan {tag}", *lines[5:]]) + "\n")
    done = rankhouse_in_process("eval", QRELS, broken, "-m", "AP")
    assert (done.returncode, done.stderr.splitlines()[0]) == (
        2,
        f"error: {broken}:5: score is NaN or infinite (score nan)",
    )
    assert (
        fresh["error"]["stdout"]
        == "run 'bm25' (pandas DataFrame), row 4, column score: score is NaN or infinite (score nan)\n"
    )
    study = fresh["study"]["stdout"].splitlines()
    assert study[:2] == ["study trec_sample has no freeze: its labels stay closed", "trec_sample-1"]
    summary = {line.split()[0]: line.split()[1:] for line in study[3:]}
    rows = markdown_rows(evaluated)
    for i, measure in enumerate(["nDCG@10", "P@10", "AP"]):
        assert summary[measure] == [rows["results.test"][i], rows["results.trunc"][i]]
    judgments = sum(1 for line in QRELS.read_text().splitlines() if line.strip())
    assert fresh["connect"]["stdout"] == f"{{'judgments': [{judgments}]}}\n"
    ap = [f"{float(line.split()[-2]):.4f}" for line in fresh["connect"]["result"].splitlines()[1:]]
    assert ap == [rows["results.test"][2], rows["results.trunc"][2]]  # the study's AP, as `rankhouse eval` gives it
