"""A load's memory is bounded whatever its input's size (issue 39): DuckDB's memory_limit and a fixed
margin over what the same command takes to load a tiny file, whichever way the input comes: a plain run
through the fast reader, a run the general reader stages, gzip on standard input (copied once, then
read), qrels (loaded on the labels' own connection). A reader that held its input whole, or a
connection without the limit, would grow with the input.

Each load runs in a child process (`rankhouse load run|qrels`) under RANKHOUSE_MEMORY_LIMIT and reports
its own peak resident memory (VmHWM: not getrusage's ru_maxrss, which a child forked from this test's
process starts at that process's size, nor RUSAGE_CHILDREN's, the largest child's so far). The child
reads its input in blocks of 1 MiB instead of 16 (FAST_BLOCK, READ_BLOCK), so that a 3M-line input
(75 MB) is large against what a load holds by design."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM in /proc (Linux)")

LIMIT_MB = 64  # RANKHOUSE_MEMORY_LIMIT of the loads
MARGIN_MB = 150  # what a load may hold beyond the limit and a tiny load's peak: blocks in flight, DuckDB's own
QUERIES, DOCS = 30_000, 100  # 3M lines (75 MB)

# The child: a rankhouse command read in 1 MiB blocks, then its own peak resident memory in KiB on stderr.
CHILD = """
import sys
import rankhouse.loaders.lines, rankhouse.loaders.trec
rankhouse.loaders.trec.FAST_BLOCK = rankhouse.loaders.lines.READ_BLOCK = 1 << 20
from rankhouse.cli import run
status = run(sys.argv[1:])
with open("/proc/self/status") as lines:
    print(next(line.split()[1] for line in lines if line.startswith("VmHWM:")), file=sys.stderr)
sys.exit(status)
"""


def write_inputs(folder: Path, queries: int, docs: int) -> None:
    """run.txt (`queries` x `docs` lines in the simple layout, each query's documents in trec_eval's
    order) and qrels.txt (a judgment of every retrieved document)."""
    qid = np.repeat(np.arange(queries), docs)
    rank = np.tile(np.arange(1, docs + 1), queries)
    ids = lambda prefix, numbers: pc.binary_join_element_wise(prefix, pa.array(numbers).cast(pa.string()), "")  # noqa: E731
    qids, docnos = ids("q", qid), ids("d", qid * 7919 + rank * 104729)
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run = pa.table({
        "qid": qids, "q0": pa.repeat("Q0", len(qid)), "docno": docnos, "rank": rank,
        "score": (docs - rank + 1) / docs, "tag": pa.repeat("t", len(qid)),
    })  # fmt: skip
    pacsv.write_csv(run, str(folder / "run.txt"), options)
    qrels = pa.table({"qid": qids, "iter": pa.repeat("0", len(qid)), "docno": docnos, "rel": rank % 4})
    pacsv.write_csv(qrels, str(folder / "qrels.txt"), options)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """The folder of run.txt, qrels.txt, comment.run (the run with a comment line first: the general
    reader's), run.txt.gz and tiny.run (its first 100 lines)."""
    folder = tmp_path_factory.mktemp("bounded")
    write_inputs(folder, QUERIES, DOCS)
    data = (folder / "run.txt").read_bytes()
    (folder / "comment.run").write_bytes(b"# read by the general reader\n" + data)
    (folder / "run.txt.gz").write_bytes(gzip.compress(data, compresslevel=1))
    (folder / "tiny.run").write_bytes(b"".join(data.splitlines(keepends=True)[:100]))
    return folder


def load_peak_mb(db: Path, what: str, path: Path, stdin: bool = False) -> tuple[float, str]:
    """(the peak resident memory in MB, what it said) of `rankhouse load WHAT` in a child process under
    LIMIT_MB, the input given as a path or on standard input."""
    env = {**os.environ, "RANKHOUSE_MEMORY_LIMIT": f"{LIMIT_MB}MB"}
    args = ["load", what, "--db", str(db), "-" if stdin else str(path)]
    with open(path if stdin else os.devnull, "rb") as given:
        done = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, stdin=given, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    *said, peak = done.stderr.splitlines()
    return int(peak) / 1024, done.stdout + "\n".join(said)


@pytest.fixture(scope="module")
def tiny_peak(inputs, tmp_path_factory) -> float:
    """The peak of loading a 100-line run: the interpreter, rankhouse and its libraries."""
    return load_peak_mb(tmp_path_factory.mktemp("tiny") / "w.duckdb", "run", inputs / "tiny.run")[0]


@pytest.mark.parametrize(
    ("way", "what", "name", "stdin"),
    [("plain", "run", "run.txt", False), ("general", "run", "comment.run", False),
     ("gzip on standard input", "run", "run.txt.gz", True), ("qrels", "qrels", "qrels.txt", False)],
)  # fmt: skip
def test_a_load_stays_within_the_memory_limit_and_a_margin(tmp_path, inputs, tiny_peak, way, what, name, stdin):
    peak, said = load_peak_mb(tmp_path / "w.duckdb", what, inputs / name, stdin)
    assert f"loaded {QUERIES * DOCS} rows" in said, said
    bound = tiny_peak + LIMIT_MB + MARGIN_MB
    assert peak < bound, f"{way}: peak {peak:.0f} MB, over {tiny_peak:.0f} MB (a tiny load) + {LIMIT_MB} + {MARGIN_MB}"
