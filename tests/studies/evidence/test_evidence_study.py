"""The evidence study (seed 000): the objective, the greedy selection and the oracle on hand-computed toys,
every tie rule, the comparator runs, and the demonstration study run end to end with its figures
re-computed independently: the selections in numpy from the exported bundle alone, the measures from
the judgments file, the bootstrap from the stored plans, the oracle by brute force in Python."""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq
import pytest
from warehouse_files import copy_warehouse

from rankhouse.errors import AuditError, ModelError
from rankhouse.functions import register
from rankhouse.loaders import load_run
from rankhouse.paths import ROOT
from rankhouse.studies.evidence.generators import store_subset_plans
from rankhouse.studies.evidence.loaders import (
    load_evidence_documents,
    load_evidence_judgments,
    load_evidence_pool,
    load_evidence_tasks,
    load_evidence_vectors,
)
from rankhouse.studies.evidence.select import greedy_select, greedy_steps, objective, program_sha256, record_program
from rankhouse.study import Protocol
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

STUDY = ROOT / "studies" / "evidence_demo.toml"
METHODS = ("coverage", "dense", "typed", "oracle")
CONTRASTS = {"coverage - dense": ("coverage", "dense"), "coverage - typed": ("coverage", "typed"),
             "typed - dense": ("typed", "dense"), "oracle - dense": ("oracle", "dense")}  # fmt: skip
PREPARE = "+evidence_selections +evidence_objective +evidence_run_checks"
EVALUATE = "+evidence_task_metrics +evidence_oracle"


# -- toys: a bundle written to files, loaded by the loaders, with explicit low-dimensional vectors ----------
def padded(vector: list[float]) -> list[float]:
    return [*vector, *[0.0] * (384 - len(vector))]


def toy(tmp_path: Path, tasks: dict, documents: dict, vectors: dict, judgments: list | None = None,
        params: dict | None = None, select: str = PREPARE, runs: dict | None = None) -> Warehouse:  # fmt: skip
    """A warehouse with the toy bundle `toy` loaded and the selected models built.

    tasks: {task_id: (question, [requirements], split, [pool doc_ids])}; documents: {doc_id: text};
    vectors: {doc_id: [...], (task_id, facet): [...]}; judgments: [(task, doc, judge, grade, [obligations])];
    runs: {run_id: [(task, doc, rank, score)]}, loaded as TREC runs.
    """
    folder = tmp_path / "toy"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"task_id": t, "question": q, "requirements": r, "split": s}) for t, (q, r, s, _) in tasks.items()
    ]
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "documents.jsonl").write_text(
        "".join(json.dumps({"doc_id": d, "text": x}) + "\n" for d, x in documents.items())
    )
    (folder / "pool-key.json").write_text(json.dumps({t: spec[3] for t, spec in tasks.items()}))
    wh = Warehouse(":memory:")
    load_evidence_tasks(wh, folder / "tasks.jsonl")
    load_evidence_documents(wh, folder / "documents.jsonl")
    load_evidence_pool(wh, folder / "pool-key.json")
    if judgments:
        (folder / "judgments.jsonl").write_text("".join(
            json.dumps({"task_id": t, "doc_id": d, "judge": j, "grade": g, "obligations": o}) + "\n"
            for t, d, j, g, o in judgments
        ))  # fmt: skip
        load_evidence_judgments(wh, folder / "judgments.jsonl")
    for run_id, rows in (runs or {}).items():
        path = tmp_path / f"{run_id}.run"
        path.write_text("".join(f"{t} Q0 {d} {rank} {score} {run_id}\n" for t, d, rank, score in rows))
        load_run(wh, path, run_id)
    for key, vector in vectors.items():
        if isinstance(key, tuple):
            wh.sql("INSERT INTO raw.evidence_facet_vectors VALUES ('toy', ?, ?, ?::FLOAT[384])", [*key, padded(vector)])
        else:
            wh.sql("INSERT INTO raw.evidence_vectors VALUES ('toy', ?, ?::FLOAT[384])", [key, padded(vector)])
    record_program(wh)
    store_subset_plans(wh, "evidence_bootstrap", "toy", replicates=20, seed=1)
    if judgments:
        wh.open_gate()
    params = {"study": "evidence_demo", **Protocol.load(STUDY).parameters, "bundle": "toy", **(params or {})}
    project = Project.load(params=params)
    Runner(wh, project, params).run(project.select(select))
    return wh


# The three-document toy: question q = e1 and one requirement r = e2 (two facets, weight 1/2 each);
# d1 = (0.8, 0.6, 0), d2 = (0.6, 0, 0.8), d3 = (0, 0.6, 0.8).
THREE = {
    "tasks": {"t": ("Question?", ["requirement"], "final", ["d1", "d2", "d3"])},
    "documents": {"d1": "one", "d2": "two", "d3": "three"},
    "vectors": {"d1": [0.8, 0.6, 0.0], "d2": [0.6, 0.0, 0.8], "d3": [0.0, 0.6, 0.8],
                ("t", 0): [1.0, 0.0, 0.0], ("t", 1): [0.0, 1.0, 0.0]},
}  # fmt: skip
# By hand: positive cosines q: 0.8, 0.6, 0; r: 0.6, 0, 0.6. Normalised by the pool maxima (0.8, 0.6):
# g(q) = 1, 0.75, 0; g(r) = 1, 0, 1. Pair cosines d1.d2 = 0.48, d1.d3 = 0.36, d2.d3 = 0.64, so the
# penalties (/ C(5, 2) = 10) are 0.048, 0.036, 0.064.
THREE_GAINS = [[1.0, 0.75, 0.0], [1.0, 0.0, 1.0]]
THREE_PENALTIES = [[0.0, 0.048, 0.036], [0.048, 0.0, 0.064], [0.036, 0.064, 0.0]]
# Step 1: F({d1}) = (1 + 1)/2 = 1, F({d2}) = 0.75/2 = 0.375, F({d3}) = 1/2 = 0.5         -> d1, gain 1
# Step 2: F({d1, d2}) = (2 - 0.048)/2 = 0.976, F({d1, d3}) = (2 - 0.036)/2 = 0.982       -> d3, gain -0.018
# Step 3: F({d1, d2, d3}) = (2 - 0.148)/2 = 0.926                                        -> d2, gain -0.056
THREE_STEPS = [("d1", 1.0, 1.0), ("d3", -0.018, 0.982), ("d2", -0.056, 0.926)]


def test_objective_and_greedy_steps_by_hand_in_python():
    ids = ["d1", "d2", "d3"]
    assert objective(THREE_GAINS, THREE_PENALTIES, []) == 0.0
    assert objective(THREE_GAINS, THREE_PENALTIES, [0]) == pytest.approx(1.0, abs=1e-15)
    assert objective(THREE_GAINS, THREE_PENALTIES, [1]) == pytest.approx(0.375, abs=1e-15)
    assert objective(THREE_GAINS, THREE_PENALTIES, [0, 1]) == pytest.approx(0.976, abs=1e-15)
    assert objective(THREE_GAINS, THREE_PENALTIES, [0, 2]) == pytest.approx(0.982, abs=1e-15)
    assert objective(THREE_GAINS, THREE_PENALTIES, [2, 1, 0]) == pytest.approx(0.926, abs=1e-15)
    steps = greedy_steps(ids, THREE_GAINS, THREE_PENALTIES, 5)
    assert [doc for doc, _ in steps] == ["d1", "d3", "d2"]  # a pool smaller than the budget: all of it
    assert [gain for _, gain in steps] == pytest.approx([1.0, -0.018, -0.056], abs=1e-15)
    assert greedy_select(ids, THREE_GAINS, THREE_PENALTIES, 2) == ["d1", "d3"]


def test_objective_and_every_greedy_step_by_hand_in_sql(tmp_path):
    wh = toy(tmp_path, **THREE)
    gains = wh.sql(
        "SELECT facet, doc_id, positive, pool_max, gain, facets FROM models.evidence_facet_gains ORDER BY ALL"
    )
    expected = [(0, "d1", 0.8, 0.8, 1.0, 2), (0, "d2", 0.6, 0.8, 0.75, 2), (0, "d3", 0.0, 0.8, 0.0, 2),
                (1, "d1", 0.6, 0.6, 1.0, 2), (1, "d2", 0.0, 0.6, 0.0, 2), (1, "d3", 0.6, 0.6, 1.0, 2)]  # fmt: skip
    for row, want in zip(gains, expected, strict=True):
        assert row[:2] == want[:2] and row[5] == want[5]
        assert row[2:5] == pytest.approx(want[2:5], abs=1e-6)
    penalties = wh.sql("SELECT doc_a, doc_b, penalty FROM models.evidence_pair_penalties ORDER BY ALL")
    assert [p[:2] for p in penalties] == [("d1", "d2"), ("d1", "d3"), ("d2", "d3")]
    assert [p[2] for p in penalties] == pytest.approx([0.048, 0.036, 0.064], abs=1e-7)
    steps = wh.sql("SELECT rank, doc_id, gain, objective FROM models.evidence_objective WHERE method = 'coverage' "
                   "ORDER BY rank")  # fmt: skip
    assert [(r, d) for r, d, _, _ in steps] == [(1, "d1"), (2, "d3"), (3, "d2")]
    for (_, _, gain, value), (_, want_gain, want_value) in zip(steps, THREE_STEPS, strict=True):
        assert (gain, value) == pytest.approx((want_gain, want_value), abs=1e-6)
    assert wh.sql("SELECT doc_id FROM models.evidence_greedy ORDER BY rank") == [("d1",), ("d3",), ("d2",)]
    dense = wh.sql("SELECT doc_id, score FROM models.evidence_runs WHERE method = 'dense' ORDER BY rank")
    assert [d for d, _ in dense] == ["d1", "d2", "d3"]
    assert [s for _, s in dense] == pytest.approx([0.8, 0.6, 0.0], abs=1e-6)


def test_an_all_zero_facet_stays_zero_and_negative_cosines_count_as_zero(tmp_path):
    wh = toy(tmp_path, {"t": ("Q?", ["r0", "r1"], "final", ["a", "b"])}, {"a": "x", "b": "y"},
             {"a": [1.0, 0.0], "b": [0.0, 1.0], ("t", 0): [0.6, 0.8], ("t", 1): [-1.0, 0.0],
              ("t", 2): [0.0, 0.0, 1.0]})  # fmt: skip
    zero = wh.sql("SELECT facet, doc_id, positive, pool_max, gain FROM models.evidence_facet_gains WHERE facet > 0 "
                  "ORDER BY ALL")  # fmt: skip
    assert zero == [(1, "a", 0.0, 0.0, 0.0), (1, "b", 0.0, 0.0, 0.0), (2, "a", 0.0, 0.0, 0.0), (2, "b", 0.0, 0.0, 0.0)]
    # F({b}) = (0.8/0.8)/3 beats F({a}) = (0.6/0.8)/3; the zero facets add nothing
    steps = wh.sql("SELECT doc_id, gain FROM models.evidence_objective WHERE method = 'coverage' ORDER BY rank")
    assert [d for d, _ in steps] == ["b", "a"]
    assert [g for _, g in steps] == pytest.approx([1 / 3, 0.0], abs=1e-6)


# -- tie rules --------------------------------------------------------------------------------------
def test_greedy_exact_ties_choose_the_smaller_doc_id():
    # two identical documents (listed larger id first): the first step ties exactly, 'a' wins; then 'c'
    # adds nothing (gain 0) and 'b' costs its penalty (gain -0.1/2), so 'c' comes before 'b'
    ids = ["b", "a", "c"]
    gains = [[1.0, 1.0, 0.5], [0.0, 0.0, 0.0]]
    penalties = [[0.0, 0.1, 0.0], [0.1, 0.0, 0.0], [0.0, 0.0, 0.0]]
    steps = greedy_steps(ids, gains, penalties, 3)
    assert [doc for doc, _ in steps] == ["a", "c", "b"]
    assert [gain for _, gain in steps] == pytest.approx([0.5, 0.0, -0.05], abs=1e-15)
    # a tie at a later step: after 'z', 'y' and 'a' add exactly the same (0.5 / 2), 'a' wins
    assert greedy_select(["z", "y", "a"], [[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]], [[0.0] * 3] * 3, 2) == ["z", "a"]


def test_greedy_tie_in_sql_goes_to_the_smaller_doc_id(tmp_path):
    vectors = {"x1": [1.0, 0.0], "x2": [1.0, 0.0], "x3": [0.0, 1.0], ("t", 0): [1.0, 0.0], ("t", 1): [0.0, 1.0]}
    wh = toy(tmp_path, {"t": ("Q?", ["r"], "final", ["x2", "x1", "x3"])}, {"x1": "a", "x2": "a", "x3": "c"}, vectors)
    assert wh.sql("SELECT doc_id FROM models.evidence_greedy ORDER BY rank") == [("x1",), ("x3",), ("x2",)]
    # dense and typed: x1 and x2 have identical vectors and texts, so equal scores; doc_id ascending
    for method in ("dense", "typed"):
        ranked = wh.sql("SELECT doc_id FROM models.evidence_runs WHERE method = ? ORDER BY rank", [method])
        assert ranked == [("x1",), ("x2",), ("x3",)], method


def test_typed_is_dense_plus_a_tenth_of_pool_normalised_bm25(tmp_path):
    wh = toy(tmp_path, {"t": ("card fee", ["r"], "final", ["a", "b", "c"]), "u": ("nothing", ["r"], "final", ["a"])},
             {"a": "card fee card", "b": "card", "c": "other words"},
             {"a": [0.6, 0.8], "b": [0.8, 0.6], "c": [1.0, 0.0], ("t", 0): [1.0, 0.0], ("t", 1): [0.0, 1.0],
              ("u", 0): [0.0, 1.0], ("u", 1): [1.0, 0.0]})  # fmt: skip
    rows = {(t, d): (dense, bm25, top, typed) for t, d, dense, bm25, top, typed in wh.sql(
        "SELECT task_id, doc_id, dense, bm25, bm25_pool_max, typed FROM models.evidence_comparator_scores"
    )}  # fmt: skip
    # BM25 by hand: N = 3, lengths 3, 1, 2 (average 2); df(card) = 2, df(fee) = 1
    idf = {"card": math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)), "fee": math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))}

    def term(tf: int, length: int, word: str) -> float:
        return idf[word] * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / 2))

    bm25 = {"a": term(2, 3, "card") + term(1, 3, "fee"), "b": term(1, 1, "card"), "c": 0.0}
    for doc, score in bm25.items():
        dense, ours, top, typed = rows[("t", doc)]
        assert ours == pytest.approx(score, abs=1e-11) and top == pytest.approx(max(bm25.values()), abs=1e-11)
        assert typed == pytest.approx(dense + 0.1 * score / max(bm25.values()), abs=1e-11)
    assert rows[("u", "a")][1:] == (0.0, 0.0, rows[("u", "a")][0])  # pool maximum 0: the BM25 term is 0
    ranked = [d for (d,) in wh.sql("SELECT doc_id FROM models.evidence_runs WHERE method = 'typed' AND task_id = 't' "
                                   "ORDER BY rank")]  # fmt: skip
    assert ranked == sorted("abc", key=lambda d: -rows[("t", d)][3])


# -- comparator runs supplied as TREC files ------------------------------------------------------------
def test_a_supplied_dense_run_is_verified_and_a_supplied_typed_run_is_used(tmp_path):
    three = {**THREE, "params": {"dense_run": "given_dense", "typed_run": "given_typed"}}
    good = {"given_dense": [("t", "d1", 1, 0.8), ("t", "d2", 2, 0.6), ("t", "d3", 3, 0.0)],
            "given_typed": [("t", "d3", 1, 9.0), ("t", "d1", 2, 8.0), ("t", "d2", 3, 7.0)]}  # fmt: skip
    wh = toy(tmp_path, **three, runs=good)
    assert wh.sql("SELECT DISTINCT method, source FROM models.evidence_runs ORDER BY 1") == [
        ("dense", "supplied"), ("typed", "supplied")]  # fmt: skip
    typed = wh.sql("SELECT doc_id FROM models.evidence_selections WHERE method = 'typed' ORDER BY rank")
    assert typed == [("d3",), ("d1",), ("d2",)]
    wrong = {"given_dense": [("t", "d2", 1, 0.9), ("t", "d1", 2, 0.8), ("t", "d3", 3, 0.0)],
             "given_typed": [("t", "d3", 1, 9.0), ("t", "dX", 2, 8.0), ("t", "d2", 3, 7.0)]}  # fmt: skip
    with pytest.raises(AuditError) as err:
        toy(tmp_path / "wrong", **three, runs=wrong)
    assert "evidence_run_checks" in str(err.value) and "accepted_range(problems, 0, 0)" in str(err.value)
    short = {"given_dense": good["given_dense"], "given_typed": [("t", "d3", 1, 9.0)]}
    with pytest.raises(AuditError, match="evidence_run_checks"):
        toy(tmp_path / "short", **three, runs=short)


def test_the_greedy_udf_refuses_a_program_other_than_the_recorded_one(tmp_path):
    wh = toy(tmp_path, **THREE)
    wh.sql("UPDATE raw.evidence_programs SET sha256 = 'edited' WHERE program = 'evidence_greedy'")
    params = {"bundle": "toy"}
    with pytest.raises(ModelError, match="selection program changed since it was recorded"):
        Runner(wh, Project.load(params=params), params).run(["evidence_greedy"], force=True)
    assert len(program_sha256()) == 64
    register(wh.con, ("evidence_greedy",))  # registering again is harmless


# -- the oracle ------------------------------------------------------------------------------------
ORACLE_DOCS = ["a0", "a1", "a2", "b1", "c1", "d1", "e1"]
# agreed obligations (A and B both list them) and mean grades: a1, a2 cover requirement 0, b1 requirement 1,
# c1 requirement 2 (the only one, grade 1); d1 grade 3 covers nothing; e1 grade 3 is listed for 1 by A only;
# a0 has grade 0 and the smallest id.
ORACLE_LABELS = [("a0", 0, [], []), ("a1", 3, [0], [0]), ("a2", 3, [0], [0]), ("b1", 2, [1], [1]),
                 ("c1", 1, [2], [2]), ("d1", 3, [], []), ("e1", 3, [1], [])]  # fmt: skip


def test_the_oracle_finds_the_known_best_subset_by_its_three_tie_levels(tmp_path):
    judgments = [("t", d, judge, g, oa if judge == "A" else ob) for d, g, oa, ob in ORACLE_LABELS for judge in "AB"]
    judgments += [("s", "a1", "A", 3, [0]), ("s", "a1", "B", 2, [0]), ("s", "b1", "A", 1, [])]
    vectors = (
        {d: [1.0] for d in ORACLE_DOCS} | {("t", f): [1.0] for f in range(4)} | {("s", f): [1.0] for f in range(2)}
    )
    tasks = {"t": ("Q?", ["r0", "r1", "r2"], "final", ORACLE_DOCS), "s": ("Q?", ["r0"], "final", ["b1", "a1"])}
    wh = toy(tmp_path, tasks, dict.fromkeys(ORACLE_DOCS, "text"), vectors, judgments, select=EVALUATE)
    rows = wh.sql("SELECT task_id, rank, doc_id, covered, subsets, tied FROM models.evidence_oracle ORDER BY ALL")
    # (1) all three requirements need a1 or a2, b1 and c1, which beats {a1, a2, d1, e1, b1} (more DCG, 2
    # requirements); (2) the two other places go to grade-3 documents: four subsets tie ({a1, a2, d1},
    # {a1, a2, e1}, {a1, d1, e1}, {a2, d1, e1} with b1, c1), and {a0, a1, b1, c1, d1}, though
    # lexicographically first, has less DCG; (3) the lexicographically smallest of the four wins. Ranks
    # by mean grade descending, then doc_id. The pool of two (s) is its only subset.
    assert rows == [("s", 1, "a1", 1, 1, 1), ("s", 2, "b1", 1, 1, 1)] + [
        ("t", rank, doc, 3, math.comb(7, 5), 4) for rank, doc in enumerate(["a1", "a2", "d1", "b1", "c1"], start=1)
    ]
    dcg = wh.sql("SELECT DISTINCT dcg FROM models.evidence_oracle WHERE task_id = 't'")[0][0]
    assert dcg == pytest.approx(7 + 7 / math.log2(3) + 7 / 2 + 3 / math.log2(5) + 1 / math.log2(6), abs=1e-11)
    assert brute_force_oracle({d: (g, set(oa) & set(ob)) for d, g, oa, ob in ORACLE_LABELS}) == [
        "a1", "a2", "d1", "b1", "c1"]  # fmt: skip


def test_the_oracle_refuses_a_requirement_beyond_its_bit_masks(tmp_path):
    requirements = [f"r{k}" for k in range(63)]  # requirement 62 does not fit a 62-bit mask
    vectors = {"a": [1.0], "b": [1.0]} | {("t", f): [1.0] for f in range(64)}
    judgments = [("t", "a", judge, 3, [62]) for judge in "AB"]
    with pytest.raises(AuditError, match="accepted_range\\(mask_overflow, 0, 0\\)"):
        toy(tmp_path, {"t": ("Q?", requirements, "final", ["a", "b"])}, {"a": "x", "b": "y"}, vectors, judgments,
            select=EVALUATE)  # fmt: skip


def brute_force_oracle(labels: dict[str, tuple[float, set]], budget: int = 5) -> list[str]:
    """Seed 000's oracle by itertools: labels {doc_id: (mean grade or None, agreed requirements)}."""

    def key(subset: tuple[str, ...]) -> tuple:
        covered = set().union(*(labels[d][1] for d in subset))
        ranked = sorted(subset, key=lambda d: (-(labels[d][0] or 0), d))
        dcg = sum((2 ** (labels[d][0] or 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked))
        return (-len(covered), -round(dcg, 9), sorted(subset))

    best = min(itertools.combinations(sorted(labels), min(budget, len(labels))), key=key)
    return sorted(best, key=lambda d: (-(labels[d][0] or 0), d))


# -- the demonstration study, end to end -----------------------------------------------------------
@pytest.fixture(scope="module")
def demo(evidence_demo_study):
    """The demonstration study run end to end (conftest.evidence_demo_study), with its selections and
    exported bundle read back."""
    out = evidence_demo_study.out
    with (out / "selected.csv").open(newline="") as handle:
        selected: dict[tuple[str, str], list[str]] = {}
        for row in csv.DictReader(handle):
            selected.setdefault((row["task_id"], row["method"]), []).append(row["doc_id"])
    return SimpleNamespace(**vars(evidence_demo_study), selected=selected, bundle=read_bundle(out / "bundle"))


def read_bundle(folder: Path) -> SimpleNamespace:
    """The exported bundle, read with json and pyarrow only."""

    def jsonl(name: str) -> list[dict]:
        return [json.loads(line) for line in (folder / name).read_text().splitlines() if line.strip()]

    vectors = pq.read_table(folder / "vectors.parquet").to_pydict()
    facets = pq.read_table(folder / "facet_vectors.parquet").to_pydict()
    judgments: dict[tuple[str, str], dict[str, tuple[int, set]]] = {}
    for j in jsonl("judgments.jsonl"):
        judgments.setdefault((j["task_id"], j["doc_id"]), {})[j["judge"]] = (j["grade"], set(j["obligations"]))
    runs = {}
    for method in ("dense", "typed"):
        for line in (folder / f"{method}.run").read_text().splitlines():
            task, _, doc, rank, score, _ = line.split()
            runs.setdefault((method, task), []).append((int(rank), doc, float(score)))
    return SimpleNamespace(
        tasks=jsonl("tasks.jsonl"),
        documents={d["doc_id"]: d["text"] for d in jsonl("documents.jsonl")},
        pools=json.loads((folder / "pool-key.json").read_text()),
        judgments=judgments,
        doc_vectors=dict(zip(vectors["doc_id"], np.asarray(vectors["vector"], dtype=np.float64), strict=True)),
        facet_vectors={(t, f): np.asarray(v, dtype=np.float64)
                       for t, f, v in zip(facets["task_id"], facets["facet"], facets["vector"], strict=True)},
        runs=runs,
    )  # fmt: skip


def reference_greedy(ids: list[str], gains: np.ndarray, pairs: np.ndarray, budget: int) -> list[str]:
    """An independent greedy: numpy sums, scores within 1e-12 treated as ties (smaller doc_id first)."""

    def value(members: list[int]) -> float:
        covered = gains[:, members].max(axis=1).sum() if members else 0.0
        penalty = sum(pairs[i, j] for i, j in itertools.combinations(members, 2)) / math.comb(budget, 2)
        return (covered - penalty) / gains.shape[0]

    chosen: list[int] = []
    for _ in range(min(budget, len(ids))):
        scored = [(value([*chosen, i]) - value(chosen), ids[i], i) for i in range(len(ids)) if i not in chosen]
        top = max(s for s, _, _ in scored)
        chosen.append(min((d, i) for s, d, i in scored if s >= top - 1e-12)[1])
    return [ids[i] for i in chosen]


def test_selections_recompute_from_the_exported_bundle_alone(demo):
    b = demo.bundle
    for task in b.tasks:
        task_id, pool = task["task_id"], sorted(b.pools[task["task_id"]])
        documents = np.stack([b.doc_vectors[d] for d in pool])
        facets = np.stack([b.facet_vectors[(task_id, f)] for f in range(len(task["requirements"]) + 1)])
        positive = np.maximum(facets @ documents.T, 0)
        top = positive.max(axis=1, keepdims=True)
        gains = np.divide(positive, top, out=np.zeros_like(positive), where=top > 0)
        pairs = np.maximum(documents @ documents.T, 0)
        assert demo.selected[(task_id, "coverage")] == reference_greedy(pool, gains, pairs, 5), task_id
        dense = sorted(pool, key=lambda d: (-float(b.doc_vectors[d] @ facets[0]), d))[:5]
        assert demo.selected[(task_id, "dense")] == dense, task_id
        assert [d for _, d, _ in sorted(b.runs[("dense", task_id)])[:5]] == dense
        assert [d for _, d, _ in sorted(b.runs[("typed", task_id)])[:5]] == demo.selected[(task_id, "typed")]


def test_the_sql_objective_is_the_greedys_python_objective_on_every_demo_selection(demo):
    # F(S) has two definitions that must agree: the coverage_objective macro (evidence_objective) and the
    # greedy UDF's own (rankhouse/studies/evidence/select.py objective and greedy_steps), over the same
    # gains/penalties
    wh = demo.wh
    gains: dict[str, dict[int, dict[str, float]]] = {}
    for task_id, facet, doc_id, gain in wh.sql("SELECT task_id, facet, doc_id, gain FROM models.evidence_facet_gains"):
        gains.setdefault(task_id, {}).setdefault(facet, {})[doc_id] = gain
    penalty = {
        (t, a, b): p
        for t, a, b, p in wh.sql("SELECT task_id, doc_a, doc_b, penalty FROM models.evidence_pair_penalties")
    }
    steps = wh.sql("SELECT method, task_id, rank, doc_id, objective, gain FROM models.evidence_objective ORDER BY ALL")
    checked = 0
    for (method, task_id), rows in itertools.groupby(steps, key=lambda r: (r[0], r[1])):
        rows = list(rows)
        pool = sorted(gains[task_id][0])
        matrix = [[gains[task_id][f][d] for d in pool] for f in sorted(gains[task_id])]
        pairs = [[penalty.get((task_id, min(a, b), max(a, b)), 0.0) for b in pool] for a in pool]
        members = [pool.index(doc_id) for _, _, _, doc_id, _, _ in rows]
        for k, (_, _, _, _, value, _) in enumerate(rows, start=1):
            assert value == pytest.approx(objective(matrix, pairs, members[:k]), abs=1e-12), (method, task_id, k)
        if method == "coverage":
            greedy = greedy_steps(pool, matrix, pairs, len(rows))
            assert [d for d, _ in greedy] == [r[3] for r in rows], task_id
            assert [g for _, g in greedy] == pytest.approx([r[5] for r in rows], abs=1e-12), task_id
        checked += 1
    assert checked == 3 * len(demo.bundle.tasks)  # coverage, dense and typed for every task


def tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def test_the_typed_run_is_dense_plus_pool_normalised_bm25_recomputed_in_python(demo):
    b = demo.bundle
    documents = {d: tokens(t) for d, t in b.documents.items()}
    n = len(documents)
    average = sum(map(len, documents.values())) / n
    df: dict[str, int] = {}
    for terms in documents.values():
        for term in set(terms):
            df[term] = df.get(term, 0) + 1
    for task in b.tasks:
        pool = b.pools[task["task_id"]]
        bm25 = {}
        for d in pool:
            terms = documents[d]
            bm25[d] = sum(
                math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * terms.count(t) * 2.2
                / (terms.count(t) + 1.2 * (0.25 + 0.75 * len(terms) / average))
                for t in set(tokens(task["question"])) if t in terms
            )  # fmt: skip
        top = max(bm25.values())
        question = b.facet_vectors[(task["task_id"], 0)]
        typed = {d: float(b.doc_vectors[d] @ question) + 0.1 * (bm25[d] / top if top else 0) for d in pool}
        written = {doc: score for _, doc, score in b.runs[("typed", task["task_id"])]}
        assert written == pytest.approx(typed, abs=1e-9)
        ranked = [d for _, d, _ in sorted(b.runs[("typed", task["task_id"])])]
        assert all(typed[x] >= typed[y] - 1e-12 for x, y in itertools.pairwise(ranked))


def agreed(judgments: dict, task: str, doc: str) -> set[int]:
    by_judge = judgments.get((task, doc), {})
    return by_judge.get("A", (0, set()))[1] & by_judge.get("B", (0, set()))[1]


def task_measures(demo, task: dict, docs: list[str]) -> dict[str, float]:
    """Seed 000's measures of one selection, from the judgments file and the exported vectors."""
    b, task_id = demo.bundle, task["task_id"]

    def gain(doc: str) -> float:
        grades = [g for g, _ in b.judgments.get((task_id, doc), {}).values()]
        return 2 ** (sum(grades) / len(grades)) - 1 if grades else 0.0

    ideal = sorted((gain(d) for d in b.pools[task_id]), reverse=True)[:5]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    dcg = sum(gain(d) / math.log2(i + 2) for i, d in enumerate(docs))
    sets = [agreed(b.judgments, task_id, d) for d in docs]
    covered = set().union(*sets)
    assignments = sum(map(len, sets))
    cosines = [max(0.0, float(b.doc_vectors[x] @ b.doc_vectors[y])) for x, y in itertools.combinations(docs, 2)]
    return {"nDCG@5": dcg / idcg if idcg else 0.0, "coverage": len(covered) / len(task["requirements"]),
            "redundancy": (assignments - len(covered)) / assignments if assignments else 0.0,
            "pair_cosine": float(np.mean(cosines)), "covered": covered}  # fmt: skip


def test_measures_recompute_from_the_judgments_file(demo):
    per_method: dict[str, dict[str, list]] = {m: {} for m in METHODS}
    for task in demo.bundle.tasks:
        dense_covered = task_measures(demo, task, demo.selected[(task["task_id"], "dense")])["covered"]
        for method in METHODS:
            values = task_measures(demo, task, demo.selected[(task["task_id"], method)])
            values["gained_vs_dense"] = len(values["covered"] - dense_covered)
            values["lost_vs_dense"] = len(dense_covered - values.pop("covered"))
            for measure, value in values.items():
                per_method[method].setdefault(measure, []).append(value)
    for method in METHODS:
        for measure, values in per_method[method].items():
            expected = sum(values) if measure.endswith("_vs_dense") else np.mean(values)
            ours = demo.results["methods"][method][measure]
            assert ours["value"] == pytest.approx(expected, abs=1e-12), (method, measure)
            assert ours["tasks"] == 48
    assert demo.results["methods"]["dense"]["gained_vs_dense"]["value"] == 0


def test_the_oracle_matches_brute_force_on_the_demo_pools(demo):
    b = demo.bundle
    checked = 0
    for task in b.tasks:
        task_id = task["task_id"]
        if len(b.pools[task_id]) > 13 and task_id not in demo.params["example_tasks"]:
            continue  # the large pools take seconds in Python; SQL enumerated them all
        labels = {}
        for doc in b.pools[task_id]:
            grades = [g for g, _ in b.judgments.get((task_id, doc), {}).values()]
            labels[doc] = (sum(grades) / len(grades) if grades else None, agreed(b.judgments, task_id, doc))
        assert demo.selected[(task_id, "oracle")] == brute_force_oracle(labels), task_id
        checked += 1
    assert checked >= 20
    total = sum(math.comb(len(pool), 5) for pool in b.pools.values())
    assert demo.results["oracle"]["subsets_enumerated"] == total


def test_contrasts_match_a_numpy_bootstrap_over_each_subsets_own_plan(demo):
    wh, freeze = demo.wh, demo.freeze.freeze_id
    tasks = [(t["task_id"], t["split"]) for t in demo.bundle.tasks]
    values: dict[tuple[str, str], dict[str, float]] = {}
    for method, task_id, coverage, ndcg in wh.sql(
        "SELECT method, task_id, coverage, ndcg5 FROM results.evidence_task_metrics WHERE freeze_id = ?", [freeze]
    ):
        values[(method, task_id)] = {"coverage": coverage, "nDCG@5": ndcg}
    for subset, members in (("all", tasks), ("final", [t for t in tasks if t[1] == "final"]),
                            ("development", [t for t in tasks if t[1] == "development"])):  # fmt: skip
        draws = np.zeros((10_000, len(members)), dtype=np.int64)
        for replicate, draw, item in wh.sql(
            "SELECT replicate, draw, item FROM raw.resample_plans WHERE plan = ?", [f"evidence_bootstrap/{subset}"]
        ):
            draws[replicate, draw] = item
        assert (draws == np.random.default_rng(129300).integers(0, len(members), (10_000, len(members)))).all()
        name = f"{subset}{len(members)}"
        for contrast, (a, b) in CONTRASTS.items():
            for measure in ("coverage", "nDCG@5"):
                differences = np.array([values[(a, t)][measure] - values[(b, t)][measure] for t, _ in members])
                low, high = np.quantile(differences[draws].mean(axis=1), [0.025, 0.975])
                entry = demo.results["contrasts"][name][contrast]
                if measure != "coverage":
                    entry = entry["measures"][measure]
                assert entry["mean"] == pytest.approx(differences.mean(), abs=1e-12), (name, contrast, measure)
                assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((low, high), abs=1e-12)
                assert entry["replicates"] == 10_000
    assert sorted(demo.results["contrasts"]) == ["all48", "development12", "final36"]
    assert demo.results["contrasts"]["all48"]["oracle - dense"]["diagnostic"] is True
    assert "p_value" not in json.dumps(demo.results)


def test_results_json_selected_csv_and_the_bundle_have_the_documented_shape(demo):
    results = demo.results
    for method in METHODS:
        for measure in ("nDCG@5", "coverage", "redundancy", "pair_cosine"):
            assert 0 <= results["methods"][method][measure]["value"] <= 1
    for subset in ("all48", "final36", "development12"):
        for contrast in CONTRASTS:
            entry = results["contrasts"][subset][contrast]
            assert entry["ci_low"] <= entry["mean"] <= entry["ci_high"] or entry["ci_low"] == entry["ci_high"]
    assert results["methods"]["oracle"]["coverage"]["value"] >= max(
        results["methods"][m]["coverage"]["value"] for m in ("coverage", "dense", "typed"))  # fmt: skip
    assert len(demo.selected) == 48 * 4 and all(len(docs) == 5 for docs in demo.selected.values())
    assert all(set(docs) <= set(demo.bundle.pools[t]) for (t, _), docs in demo.selected.items())
    assert sorted(results["examples"]) == ["T18", "T21"]
    for example in results["examples"].values():
        assert sorted(example["methods"]) == sorted(METHODS)
        assert all(len(docs) == 5 for docs in example["methods"].values())
    assert results["greedy_program_sha256"] == program_sha256()
    files = sorted(p.name for p in (demo.out / "bundle").iterdir())
    assert files == ["dense.run", "documents.jsonl", "facet_vectors.parquet", "judgments.jsonl", "pool-key.json",
                     "tasks.jsonl", "typed.run", "vectors.parquet"]  # fmt: skip
    for name in ("tasks.jsonl", "documents.jsonl", "pool-key.json", "judgments.jsonl"):
        assert (demo.out / "bundle" / name).read_bytes() == (ROOT / "data" / "evidence_demo" / name).read_bytes()
    assert len(demo.bundle.facet_vectors) == 48 + 158 and len(demo.bundle.doc_vectors) == 646
    with Warehouse(":memory:") as wh:  # the exported bundle loads with the bundle's own loaders
        loads = {"tasks.jsonl": load_evidence_tasks, "documents.jsonl": load_evidence_documents,
                 "pool-key.json": load_evidence_pool, "vectors.parquet": load_evidence_vectors}  # fmt: skip
        for name, load in loads.items():
            assert load(wh, demo.out / "bundle" / name).rows > 0


def test_the_freeze_holds_the_label_free_selections_and_their_inputs(demo):
    record = json.loads(demo.freeze.path.read_text())
    for table in ("models.evidence_selections", "models.evidence_greedy", "models.evidence_facet_gains",
                  "raw.evidence_facet_vectors", "raw.evidence_vectors", "raw.evidence_programs"):  # fmt: skip
        assert record["tables"][table]["rows"] > 0, table
    assert "evidence_oracle" not in record["models"] and "evidence_selections" in record["models"]
    project = Project.load()
    for name, model in project.models.items():
        if model.group.split("/")[0] == "evidence" and model.stage == "prepare":
            assert not any(ref.startswith("gate.") for ref in project.references[name]), name
    assert project.models["evidence_oracle"].stage == "evaluate"


def test_the_greedy_selection_is_the_same_at_one_thread(demo, tmp_path):
    before = demo.wh.sql("SELECT * FROM models.evidence_greedy ORDER BY ALL")
    # on a copy: a forced rebuild writes a second store table of the same fingerprint, which the session's
    # warehouse of studies must not hold (tests/gate/test_many_studies.py: a table per fingerprint, once)
    copy = copy_warehouse(demo.wh.path, tmp_path / "w.duckdb")
    with Warehouse(copy, namespace="evidence_demo") as wh:
        register(wh.con, ("evidence_greedy",))
        wh.sql("SET threads = 1")
        Runner(wh, Project.load(params=demo.params), demo.params).run(["evidence_greedy"], force=True)
        assert wh.sql("SELECT * FROM models.evidence_greedy ORDER BY ALL") == before
