"""Fusing run files (seed 003, models/fusion): the eq. 1 p-values, the mixture e-value (eq. 7-11),
Fisher, Stouffer, RRF and rsf, checked against independent numpy/scipy implementations and ranx,
and the section-8 invariants (monotone, no zero tails, non-finite scores rejected, candidate-set
independence) plus the RRF limit of eq. 21."""

from __future__ import annotations

import copy
import math
import tempfile
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from clirunner import rankhouse, rankhouse_in_process
from fusion_runs import Fused, fuse, write_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.stats import norm

from rankhouse.errors import InputError
from rankhouse.loaders import load_run
from rankhouse.studies.fusion.fuse import RULES, fuse_runs, incomplete_candidates, write_fused_run
from rankhouse.warehouse import Warehouse

ARMS = ("bm25", "dense")
P_RULES = ("mixture", "fisher", "stouffer")  # the rules that read p-values, not list positions
K = 60  # rrf_k

# Runs as {arm: {qid: {docno: score}}}; a null run as {arm: {qid: {panel docno: score}}}.
QIDS = ["q1", "q2"]
DOCS = ["d0", "d1", "d2", "d3", "d4", "d5"]
# Few distinct scores, shared by runs and references, so that ties (within a run and between a
# candidate and the reference) are common.
GRID = st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])

ranking = st.dictionaries(st.sampled_from(DOCS), GRID, min_size=1, max_size=len(DOCS))
runs_strategy = st.fixed_dictionaries({arm: st.fixed_dictionaries({q: ranking for q in QIDS}) for arm in ARMS})
panel = st.lists(GRID, min_size=1, max_size=7).map(lambda scores: {f"n{i}": s for i, s in enumerate(scores)})
nulls_strategy = st.fixed_dictionaries({arm: st.fixed_dictionaries({q: panel for q in QIDS}) for arm in ARMS})
# A null run may leave a query out (m = 0 there: eq. 1 gives p = 1).
sparse_nulls_strategy = st.fixed_dictionaries(
    {arm: st.dictionaries(st.sampled_from(QIDS), panel, min_size=1) for arm in ARMS}
)

# Every example builds the fusion DAG in a fresh warehouse (a few tenths of a second): few examples.


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# Helpers ===============================================================================================


def eq1(reference, score: float) -> float:
    """Seed 003, eq. 1: (1 + #{reference >= s}) / (m + 1), in numpy."""
    reference = np.asarray(reference, dtype=float)
    return (1 + np.count_nonzero(reference >= score)) / (reference.size + 1)


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's order of one query's list: score descending, then document id descending."""
    return sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)


def candidate_union(runs: dict, depth: int) -> set[tuple[str, str]]:
    """Per query, every document in the first `depth` of any arm (seed 003, section 8)."""
    return {(q, d) for run in runs.values() for q, docs in run.items() for d in trec_order(docs)[:depth]}


def expected_p(runs: dict, nulls: dict, depth: int) -> dict[tuple[str, str, str], tuple[float, int]]:
    """Every (arm, qid, docno) that arm_p_values must hold, with its eq. 1 p-value and m."""
    out = {}
    for q, d in candidate_union(runs, depth):
        for arm in runs:
            if d in runs[arm].get(q, {}):
                reference = list(nulls[arm].get(q, {}).values())
                out[(arm, q, d)] = (eq1(reference, runs[arm][q][d]), len(reference))
    return out


def assert_order_modulo_ties(order: list, scores: dict, tol: float) -> None:
    """`order` lists items so that `scores` read along it never increase (beyond `tol`): the two
    orders agree up to reordering within ties."""
    values = [scores[item] for item in order]
    for i, (a, b) in enumerate(zip(values, values[1:])):
        assert b <= a + tol, f"position {i + 1}: {order[i]} ({a}) before {order[i + 1]} ({b})"


def ranking_of(fused: Fused, rule: str, qid: str) -> list[str]:
    """One rule's fused ranking of one query, as document ids in rank order."""
    rows = sorted((rank, d) for (q, d), (_, rank) in fused.rules[rule].items() if q == qid)
    assert [rank for rank, _ in rows] == list(range(1, len(rows) + 1))
    return [d for _, d in rows]


# 1. Monotonicity =======================================================================================


@examples(12)
@given(
    runs=runs_strategy,
    nulls=nulls_strategy,
    depth=st.integers(1, len(DOCS)),
    delta=st.sampled_from([0.25, 0.5, 1.0, 2.0, 10.0]),
    data=st.data(),
)
def test_raising_a_score_never_lowers_the_fused_score(runs, nulls, depth, delta, data):
    """Seed 003, section 8 (monotone): raising one document's raw score in one arm, everything else
    kept, never raises its p-value on that arm (leaves its other arms' p alone) and never lowers its
    mixture, Fisher, Stouffer, RRF or rsf score (whether or not the raise brings it into a top-L)."""
    arm, qid, docno = data.draw(
        st.sampled_from(sorted((a, q, d) for a in ARMS for q in QIDS for d in runs[a][q])), label="raised"
    )
    raised = copy.deepcopy(runs)
    raised[arm][qid][docno] += delta
    before, after = fuse(runs, nulls, depth), fuse(raised, nulls, depth)
    key = (qid, docno)
    if key not in before.rules["rrf"]:  # RRF ranks every candidate
        return  # not a candidate before: nothing to compare
    for rule in RULES:
        if key not in before.rules.get(rule, {}):
            continue  # a p-value rule leaves an incomplete candidate out; a raise does not complete it
        assert key in after.rules[rule]  # a candidate stays one: its rank only improves
        old, new = before.rules[rule][key][0], after.rules[rule][key][0]
        assert new >= old - 1e-12 * max(1.0, abs(old)), f"{rule}: {old} -> {new}"
    for a in ARMS:
        if (a, qid, docno) in before.p:
            old_p, new_p = before.p[(a, qid, docno)][1], after.p[(a, qid, docno)][1]
            assert new_p <= old_p if a == arm else new_p == old_p, f"p on {a}: {old_p} -> {new_p}"
    # The raised arm's p moved exactly as eq. 1 says.
    reference = list(nulls[arm][qid].values())
    assert after.p[(arm, qid, docno)][1] == pytest.approx(eq1(reference, raised[arm][qid][docno]), abs=1e-15)


# 2. Eq. 1 and no zero tails ============================================================================


@examples(20)
@given(runs=runs_strategy, nulls=sparse_nulls_strategy, depth=st.integers(1, len(DOCS)))
def test_p_values_are_eq1_with_no_zero_tails(runs, nulls, depth):
    """arm_p_values holds exactly one row per arm scoring each candidate of the union, its p equal to
    a numpy evaluation of eq. 1 (reference ties count as exceeding); every p lies in [1/(m+1), 1]; a
    candidate above every reference score gets exactly 1/(m+1), one below all of them exactly 1."""
    fused = fuse(runs, nulls, depth)
    expected = expected_p(runs, nulls, depth)
    assert set(fused.p) == set(expected)
    for key, (score, p, m) in fused.p.items():
        arm, qid, docno = key
        want_p, want_m = expected[key]
        assert score == runs[arm][qid][docno]
        assert m == want_m
        assert p == pytest.approx(want_p, rel=1e-15)
        assert 1 / (m + 1) <= p <= 1
        reference = list(nulls[arm].get(qid, {}).values())
        if all(score > r for r in reference):
            assert p == 1 / (m + 1)
        if all(score < r for r in reference):
            assert p == 1.0


def test_p_values_by_hand():
    """Eq. 1 on a worked example: reference (1, 2, 2, 3), m = 4. s = 4 is above all of it: 1/5;
    s = 3 ties the top (counts): 2/5; s = 2.5: 2/5; s = 2 ties two: 4/5; s = 0 below all: 1. The dense
    arm scores every document 2: all get 4/5."""
    runs = {
        "bm25": {"q1": {"a": 4.0, "b": 3.0, "c": 2.5, "d": 2.0, "e": 0.0}},
        "dense": {"q1": {"a": 2.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 2.0}},
    }
    nulls = {arm: {"q1": {"n0": 1.0, "n1": 2.0, "n2": 2.0, "n3": 3.0}} for arm in ARMS}
    fused = fuse(runs, nulls, depth=5)
    got = {d: fused.p[("bm25", "q1", d)][1] for d in "abcde"}
    assert got == {"a": 1 / 5, "b": 2 / 5, "c": 2 / 5, "d": 4 / 5, "e": 1.0}
    assert {fused.p[("dense", "q1", d)][1] for d in "abcde"} == {4 / 5}  # equal scores, equal p


# 3. Non-finite raw scores ==============================================================================


@pytest.mark.parametrize("token", ["nan", "NaN", "inf", "-inf", "Infinity", "1e400"])
@pytest.mark.parametrize("layout", ["simple", "general"])
def test_non_finite_scores_are_rejected(tmp_path, token, layout):
    """Seed 003, section 8 (reject non-finite raw scores): a run line whose score is NaN or infinite
    (or overflows to infinity) fails to load with an InputError naming the file and the line, and
    nothing of the file is loaded, whether the file goes through the fast reader or (with a comment
    line) the general one."""
    head = "# a comment line\n" if layout == "general" else ""
    path = tmp_path / "bad.run"
    path.write_text(f"{head}q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 {token} t\nq1 Q0 d3 3 1.0 t\n")
    line = 3 if layout == "general" else 2
    with Warehouse(":memory:") as wh:
        with pytest.raises(InputError) as caught:
            load_run(wh, path, "bad")
        assert wh.sql("SELECT count(*) FROM raw.runs WHERE run_id = 'bad'") == [(0,)]
    error = caught.value
    assert (error.path, error.line) == (str(path), line)
    assert str(error).startswith(f"{path}:{line}: score is NaN or infinite")
    assert token in str(error)


def test_fusing_a_null_run_with_an_infinite_score_fails_naming_it(tmp_path):
    """fuse_runs loads the null runs with the same rules: an `inf` in a null run stops the fusion with
    an error naming that null file and line; no fused ranking is built."""
    good = write_run(tmp_path / "bm25.run", {"q1": {"d1": 1.0, "d2": 0.5}})
    dense = write_run(tmp_path / "dense.run", {"q1": {"d1": 0.3, "d2": 0.9}})
    good_null = write_run(tmp_path / "bm25.null", {"q1": {"n0": 0.1, "n1": 0.2}})
    bad_null = tmp_path / "dense.null"
    bad_null.write_text("q1 Q0 n0 1 0.2 t\nq1 Q0 n1 2 0.1 t\nq1 Q0 n2 3 inf t\n")
    with Warehouse(":memory:") as wh:
        with pytest.raises(InputError, match=r"dense\.null:3: score is NaN or infinite"):
            fuse_runs(wh, {"bm25": good, "dense": dense}, {"bm25": good_null, "dense": bad_null}, depth=10)
        built = wh.sql("SELECT count(*) FROM information_schema.tables WHERE table_name = 'fused_rankings'")
    assert built == [(0,)]


# 4. Candidate-set independence =========================================================================


@examples(8)
@given(
    runs=runs_strategy,
    nulls=nulls_strategy,
    depths=st.lists(st.integers(1, len(DOCS) + 1), min_size=2, max_size=2, unique=True),
    extra_score=GRID,
    data=st.data(),
)
def test_p_value_rules_do_not_depend_on_the_candidate_set(runs, nulls, depths, extra_score, data):
    """Seed 003, assumption 5: S(q, d; C1) = S(q, d; C2). An existing candidate's p-values and its
    mixture, Fisher and Stouffer scores are the same whether the candidate depth L is L1 or L2, and
    whether or not an unrelated document row is added to one arm's run (which may push others out of
    that arm's top L). Compared per (query id, document id) across separate warehouses."""
    arm, qid = data.draw(st.sampled_from([(a, q) for a in ARMS for q in QIDS]), label="extra row in")
    grown = copy.deepcopy(runs)
    grown[arm][qid]["a9"] = extra_score  # "a9" sorts before every other id: every doc_row shifts by one
    builds = [fuse(runs, nulls, depths[0]), fuse(runs, nulls, depths[1]), fuse(grown, nulls, depths[0])]
    base = builds[0]
    for other in builds[1:]:
        common = set(base.rules["rrf"]) & set(other.rules["rrf"]) - {(qid, "a9")}
        assert common  # both candidate sets hold every arm's top document
        for rule in P_RULES:
            # completeness is the row's own (is it in every arm's file?), not the candidate set's
            assert {k for k in common if k in base.rules.get(rule, {})} == {
                k for k in common if k in other.rules.get(rule, {})
            }
            common_rule = {k for k in common if k in base.rules.get(rule, {})}
            for key in common_rule:
                assert other.rules[rule][key][0] == pytest.approx(base.rules[rule][key][0], rel=1e-12, abs=1e-12)
        for key in set(base.p) & set(other.p):
            assert other.p[key] == base.p[key]


# 5. The RRF limit of eq. 21 ============================================================================


def limit_case(dense_ranks: dict[str, list[int]]) -> tuple[dict, dict, dict]:
    """Arms that rank the same N documents of each query completely: document i is bm25's rank
    i + 1 and dense's rank dense_ranks[q][i]. Scores are spaced integers, and each arm's null run holds
    the N - 1 midpoints between its consecutive scores, so that eq. 1 gives p = r / N exactly.
    Returns (runs, nulls, ranks) with ranks[(arm, qid, docno)] = r."""
    runs: dict = {arm: {} for arm in ARMS}
    nulls: dict = {arm: {} for arm in ARMS}
    ranks = {}
    for q, dense in dense_ranks.items():
        n = len(dense)
        score = {"bm25": lambda r: 2.0 * (n - r), "dense": lambda r: 4.0 * (n - r) - 7.0}
        for arm, arm_ranks in (("bm25", range(1, n + 1)), ("dense", dense)):
            runs[arm][q] = {f"d{i:03d}": score[arm](r) for i, r in enumerate(arm_ranks)}
            nulls[arm][q] = {f"n{r:03d}": (score[arm](r) + score[arm](r + 1)) / 2 for r in range(1, n)}
            ranks.update({(arm, q, f"d{i:03d}"): r for i, r in enumerate(arm_ranks)})
    return runs, nulls, ranks


def check_rrf_limit(dense_ranks: dict[str, list[int]]) -> Fused:
    """Fuse a limit case with beta = 1, kappa = K/N, rrf_k = K and check eq. 21: p = r/N, RRF =
    sum 1/(K + r), the mixture = log(N / (A log((K + N)/K)) * RRF), a strictly increasing function of
    RRF (equal RRF within 1e-12 <-> equal mixture within 1e-9, same strict order otherwise), and the
    mixture's fused order equal to RRF's up to ties."""
    n = len(next(iter(dense_ranks.values())))
    assert all(len(ranks) == n for ranks in dense_ranks.values())
    runs, nulls, ranks = limit_case(dense_ranks)
    fused = fuse(runs, nulls, depth=n, extra={"beta": 1.0, "kappa": K / n, "rrf_k": K})
    for key, r in ranks.items():
        assert fused.p[key][1] == pytest.approx(r / n, rel=1e-15)
    rrf, mixture = fused.rules["rrf"], fused.rules["mixture"]
    assert set(rrf) == set(mixture) == {(q, d) for _, q, d in ranks}
    for q, d in rrf:
        expected_rrf = sum(1 / (K + ranks[(arm, q, d)]) for arm in ARMS)
        assert rrf[(q, d)][0] == pytest.approx(expected_rrf, rel=1e-14)
        assert mixture[(q, d)][0] == pytest.approx(
            math.log(n / (len(ARMS) * math.log((K + n) / K)) * expected_rrf), abs=1e-9
        )
    for q in dense_ranks:
        docs = [d for qq, d in rrf if qq == q]
        for i, a in enumerate(docs):
            for b in docs[i + 1 :]:
                rrf_gap = rrf[(q, a)][0] - rrf[(q, b)][0]
                mix_gap = mixture[(q, a)][0] - mixture[(q, b)][0]
                if abs(rrf_gap) <= 1e-12:
                    assert abs(mix_gap) <= 1e-9, (q, a, b)
                else:
                    assert abs(mix_gap) > 1e-9 and (mix_gap > 0) == (rrf_gap > 0), (q, a, b)
        rrf_scores = {d: rrf[(q, d)][0] for d in docs}
        mix_scores = {d: mixture[(q, d)][0] for d in docs}
        assert_order_modulo_ties(ranking_of(fused, "mixture", q), rrf_scores, 1e-12)
        assert_order_modulo_ties(ranking_of(fused, "rrf", q), mix_scores, 1e-9)
    return fused


def rrf_sums(dense: list[int]) -> list[Fraction]:
    return [Fraction(1, K + b + 1) + Fraction(1, K + r) for b, r in enumerate(dense)]


def test_mixture_is_rrf_in_the_limit_of_eq21():
    """Eq. 21 on complete rankings of N = 30, 41 and 57 documents, dense orders drawn (seeded) so that
    no two documents have the same exact RRF sum: the mixture and RRF fused rankings are identical,
    rank for rank, besides the checks of check_rrf_limit."""
    rng = np.random.default_rng(21)
    dense_ranks = {}
    for q, n in (("q1", 30), ("q2", 41), ("q3", 57)):
        while True:
            dense = [int(r) for r in rng.permutation(n) + 1]
            sums = rrf_sums(dense)
            if len(set(sums)) == n:
                break
        dense_ranks[q] = dense
    for q, dense in dense_ranks.items():  # one build per query: kappa = K/N depends on N
        n = len(dense)
        fused = check_rrf_limit({q: dense})
        for d in (f"d{i:03d}" for i in range(n)):
            assert fused.rules["mixture"][(q, d)][1] == fused.rules["rrf"][(q, d)][1], (q, d)


@examples(12)
@given(data=st.data(), n=st.integers(2, 12))
def test_mixture_orders_as_rrf_in_the_limit_with_ties(data, n):
    """Eq. 21 with random dense orders, RRF ties (a document at ranks (a, b), another at (b, a))
    allowed: check_rrf_limit's relation and order, modulo ties."""
    dense_ranks = {q: data.draw(st.permutations(range(1, n + 1)), label=q) for q in QIDS}
    check_rrf_limit(dense_ranks)


# 6, 7. RRF and rsf against ranx ========================================================================


@pytest.fixture(scope="module")
def ranx_case(tmp_path_factory):
    """Two random runs (6 queries, 8 to 20 documents each from a pool of 60, partial overlap, distinct
    continuous scores), fused once by rankhouse (depth 25, so every list is complete) and once by ranx.
    ranx JIT-compiles on its first call, so it is imported and run here, once per module."""
    from ranx import Run
    from ranx import fuse as ranx_fuse

    rng = np.random.default_rng(7)
    pool = [f"doc{i:02d}" for i in range(60)]
    runs: dict = {arm: {} for arm in ARMS}
    nulls: dict = {arm: {} for arm in ARMS}
    for q in (f"q{i}" for i in range(6)):
        for arm in ARMS:
            size = int(rng.integers(8, 21))
            docs = rng.choice(pool, size=size, replace=False)
            scores = rng.normal(size=size) * (3.0 if arm == "bm25" else 0.2)
            assert len(set(scores)) == size
            runs[arm][q] = {str(d): float(s) for d, s in zip(docs, scores)}
            nulls[arm][q] = {f"n{i}": float(s) for i, s in enumerate(rng.normal(size=20))}
    root = tmp_path_factory.mktemp("ranx")
    written = {}
    with Warehouse(":memory:") as wh:
        arms = {arm: write_run(root / f"{arm}.run", runs[arm]) for arm in ARMS}
        null_runs = {arm: write_run(root / f"{arm}.null", nulls[arm]) for arm in ARMS}
        fuse_runs(wh, arms, null_runs, depth=25, extra={"rrf_k": K})
        for rule in ("rrf", "rsf"):
            lines = write_fused_run(wh, rule, root / f"{rule}.run")
            written[rule] = {}
            for line in (root / f"{rule}.run").read_text().splitlines():
                qid, _, docno, rank, score, _ = line.split()
                written[rule].setdefault(qid, []).append((docno, int(rank), float(score)))
            assert lines == sum(len(docs) for docs in written[rule].values())
    ranx_runs = [Run(runs[arm]) for arm in ARMS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings from ranx's compiled code
        theirs = {
            "rrf": ranx_fuse(ranx_runs, norm=None, method="rrf", params={"k": K}).to_dict(),
            "rsf": ranx_fuse(ranx_runs, norm="min-max", method="wsum", params={"weights": [0.5, 0.5]}).to_dict(),
        }
    return runs, written, theirs, root


def compare_with_ranx(runs, ours: dict, theirs: dict, scale: float) -> None:
    """Per query: the same documents (the union of both lists), scale * ranx's score within 1e-9 of
    ours, ranks 1..n in the written order, and ranx's scores non-increasing along our ranking."""
    assert set(ours) == set(theirs) == set(runs["bm25"])
    for q, listed in ours.items():
        assert {d for d, _, _ in listed} == set(runs["bm25"][q]) | set(runs["dense"][q]) == set(theirs[q])
        assert [rank for _, rank, _ in listed] == list(range(1, len(listed) + 1))
        for d, _, score in listed:
            assert score == pytest.approx(scale * theirs[q][d], abs=1e-9), (q, d)
        assert_order_modulo_ties([d for d, _, _ in listed], theirs[q], 1e-12)


def test_rrf_matches_ranx(ranx_case):
    """Rule rrf (k = 60, complete lists) against ranx.fuse(method="rrf", k=60): the same fused score
    for every (query, document) within 1e-9, and the same order up to ties."""
    runs, ours, theirs, _ = ranx_case
    compare_with_ranx(runs, ours["rrf"], theirs["rrf"], scale=1.0)


def test_rsf_matches_ranx_min_max_combsum(ranx_case):
    """Rule rsf (per-query min-max, CombSUM, an absent document adds 0) against ranx's min-max
    normalisation with a 0.5/0.5 weighted sum: our scores are exactly twice ranx's (within 1e-9) and
    the order is the same up to ties."""
    runs, ours, theirs, _ = ranx_case
    compare_with_ranx(runs, ours["rsf"], theirs["rsf"], scale=2.0)


# 8. Stouffer's inverse normal ==========================================================================


@pytest.mark.parametrize("arm", ARMS)
def test_stouffer_z_is_the_normal_quantile_of_mid_p(arm):
    """With the other arm's Stouffer weight 0, a row's Stouffer score is its z on `arm`: Acklam's
    inverse normal of 1 - p_mid, p_mid = p - 1/(2(m+1)). On the full grid of p = k/(m+1), k = 1..m+1
    (1/(m+1) and the mid-p of p = 1 included), for m = 999, 40 and 19, it agrees with
    scipy.stats.norm.ppf(1 - p_mid) to Acklam's relative error bound (1.15e-9; 1.2e-9 allowed, plus
    1e-13 absolute for the rounding of 1 - p_mid). m = 999 reaches both of Acklam's tail branches."""
    other = "dense" if arm == "bm25" else "bm25"
    runs: dict = {arm: {}, other: {}}
    nulls: dict = {arm: {}, other: {}}
    expected = {}
    for q, m in (("q1", 999), ("q2", 40), ("q3", 19)):
        # Reference 0 .. m-1; candidate j - 0.5 (j = 0..m) has m - j reference scores above it.
        nulls[arm][q] = {f"n{i:04d}": float(i) for i in range(m)}
        runs[arm][q] = {f"d{j:04d}": j - 0.5 for j in range(m + 1)}
        for j in range(m + 1):
            p = (1 + (m - j)) / (m + 1)
            expected[(q, f"d{j:04d}")] = float(norm.ppf(1 - (p - 1 / (2 * (m + 1)))))
        runs[other][q] = dict.fromkeys(runs[arm][q], 1.0)  # the other arm scores every row; its weight is 0
        nulls[other][q] = {"n0000": 0.0}
    weights = {f"stouffer_{arm}_weight": 1.0, f"stouffer_{other}_weight": 0.0}
    fused = fuse(runs, nulls, depth=1000, extra=weights)
    u = [norm.cdf(z) for z in expected.values()]
    assert min(u) < 0.02425 and max(u) > 1 - 0.02425  # both tail branches are exercised
    stouffer = fused.rules["stouffer"]
    assert set(stouffer) == set(expected)
    worst = 0.0
    for key, z in expected.items():
        got = stouffer[key][0]
        assert got == pytest.approx(z, rel=1.2e-9, abs=1e-13), key
        worst = max(worst, abs(got - z) / max(abs(z), 1e-300))
    assert worst > 0  # an approximation, not scipy itself: guards against comparing a thing to itself


# 9. The mixture against eq. 7-11 =======================================================================


def mixture_case() -> tuple[dict, dict]:
    """Seeded runs over 3 queries with partial overlap (some documents scored by one arm only), score
    ties, and references of different sizes."""
    rng = np.random.default_rng(11)
    runs: dict = {arm: {} for arm in ARMS}
    nulls: dict = {arm: {} for arm in ARMS}
    for q in ("q1", "q2", "q3"):
        for arm in ARMS:
            docs = rng.choice([f"d{i:02d}" for i in range(25)], size=int(rng.integers(10, 20)), replace=False)
            runs[arm][q] = {str(d): float(rng.integers(-20, 20)) / 4 for d in docs}
            m = int(rng.integers(5, 60))
            nulls[arm][q] = {f"n{i:02d}": float(rng.integers(-20, 20)) / 4 for i in range(m)}
    return runs, nulls


def complete(expected: dict) -> set[tuple[str, str]]:
    """The candidates that every arm scored (seed 003, section 8: the others are incomplete)."""
    return {(q, d) for _, q, d in expected if all((arm, q, d) in expected for arm in ARMS)}


@pytest.mark.parametrize("kappa, beta", [(0.0, 0.5), (0.1, 0.5), (0.05, 1.0), (0.02, 0.8), (0.0, 0.3)])
def test_mixture_matches_eq7_to_11(kappa, beta):
    """fusion_mixture against numpy: S = log sum_a pi_a B(p_a), B(p) = (kappa + p)^-beta / Z, with Z
    integrated numerically (scipy quad, not the closed form), p from eq. 1, and pi_a = 1/2 fixed by the
    two configured arms; within 1e-9. At the defaults kappa = 0, beta = 1/2 the model is also checked
    against eq. 11, E = (1/A) sum_a 1/(2 sqrt(p_a))."""
    runs, nulls = mixture_case()
    extra = {"kappa": kappa, "beta": beta}
    fused = fuse(runs, nulls, depth=8, extra=None if (kappa, beta) == (0.0, 0.5) else extra)
    z, _ = quad(lambda u: (kappa + u) ** -beta, 0, 1, epsabs=1e-14, epsrel=1e-13, limit=200)
    expected = expected_p(runs, nulls, depth=8)
    mixture = fused.rules["mixture"]
    assert set(mixture) == complete(expected)
    for q, d in mixture:
        p = np.array([expected[(arm, q, d)][0] for arm in ARMS])
        want = math.log(np.mean((kappa + p) ** -beta / z))
        assert mixture[(q, d)][0] == pytest.approx(want, abs=1e-9), (q, d)
        if (kappa, beta) == (0.0, 0.5):
            assert mixture[(q, d)][0] == pytest.approx(math.log(np.mean(1 / (2 * np.sqrt(p)))), abs=1e-9)


def test_incomplete_candidates_get_no_p_value_score():
    """Seed 003, section 8: missing is not non-matching, and pi never divides by the lists that happened
    to return the row. A candidate absent from one arm's file has no mixture, Fisher or Stouffer score
    (it is not treated as p = 1, nor fused over the one arm that scored it), while RRF and rsf, which
    read list positions, still rank it; candidate_completeness says which is which."""
    runs, nulls = mixture_case()
    expected = expected_p(runs, nulls, depth=8)
    incomplete = {(q, d) for _, q, d in expected} - complete(expected)
    assert incomplete and complete(expected)  # the data hold both kinds
    with tempfile.TemporaryDirectory() as tmp, Warehouse(":memory:") as wh:
        arms = {arm: write_run(Path(tmp) / f"{arm}.run", run) for arm, run in runs.items()}
        null_runs = {arm: write_run(Path(tmp) / f"{arm}.null.run", run) for arm, run in nulls.items()}
        fuse_runs(wh, arms, null_runs, depth=8)
        flagged = wh.sql(
            "SELECT q.qid, d.docno, c.arms_scored, c.arms FROM models.candidate_completeness AS c "
            "JOIN models.run_query_keys AS q ON q.query_row = c.query_row "
            "JOIN models.run_document_keys AS d ON d.doc_row = c.doc_row WHERE NOT c.complete"
        )
        assert incomplete_candidates(wh) == (len(incomplete), len(incomplete) + len(complete(expected)))
    assert {(q, d) for q, d, _, _ in flagged} == incomplete
    assert all(scored == 1 and arms == 2 for _, _, scored, arms in flagged)
    fused = fuse(runs, nulls, depth=8)
    for rule in P_RULES:
        assert not incomplete & set(fused.rules[rule]), rule
    for rule in ("rrf", "rsf"):
        assert incomplete <= set(fused.rules[rule]), rule


def test_fuse_command_writes_complete_candidates_and_says_how_many_are_not(tmp_path):
    """`rankhouse fuse`, as a user runs it: the mixture run holds the complete candidates with the
    scores of fusion_mixture, RRF's holds them all, and the command says how many were left out."""
    runs, nulls = mixture_case()
    expected = expected_p(runs, nulls, depth=8)
    args = ["fuse", "--depth", "8", "--db", ":memory:"]
    for arm in ARMS:
        args += ["--arm", f"{arm}={write_run(tmp_path / f'{arm}.run', runs[arm])}"]
        args += ["--null", f"{arm}={write_run(tmp_path / f'{arm}.null', nulls[arm])}"]
    fused = fuse(runs, nulls, depth=8)
    union = {(q, d) for _, q, d in expected}
    for rule, rows in (("mixture", complete(expected)), ("rrf", union)):
        out = tmp_path / f"{rule}.run"
        done = rankhouse(*args, "--rule", rule, "-o", out)
        assert done.returncode == 0, done.stderr
        written = {
            (q, d): float(score) for q, _, d, _, score, _ in (line.split() for line in out.read_text().splitlines())
        }
        assert set(written) == rows
        assert all(written[key] == fused.rules[rule][key][0] for key in rows)
        # the note is the p-value rules': rrf ranks every candidate and reads no null run
        note = f"{len(union - complete(expected))} of {len(union)} candidates lack a score"
        assert (note in done.stderr) == (rule == "mixture"), done.stderr
        assert ("--null: not read" in done.stderr) == (rule == "rrf"), done.stderr


def test_fisher_and_stouffer_match_eq4_and_eq5():
    """fusion_fisher is -2 sum_a ln p_a (eq. 4, equal alpha) and fusion_stouffer, at its default equal
    weights, sum_a z_a / sqrt(n) with z_a = scipy's norm.ppf(1 - p_mid) (eq. 5), over both arms of
    each complete candidate, p from a numpy eq. 1 on the data of the mixture test."""
    runs, nulls = mixture_case()
    fused = fuse(runs, nulls, depth=8)
    expected = expected_p(runs, nulls, depth=8)
    assert set(fused.rules["fisher"]) == set(fused.rules["stouffer"]) == complete(expected)
    for q, d in fused.rules["fisher"]:
        pm = [expected[(arm, q, d)] for arm in ARMS]
        p = np.array([value for value, _ in pm])
        assert fused.rules["fisher"][(q, d)][0] == pytest.approx(-2 * np.sum(np.log(p)), rel=1e-12, abs=1e-12)
        z = np.array([norm.ppf(1 - (p - 1 / (2 * (m + 1)))) for p, m in pm])
        tolerance = 1.2e-9 * np.sum(np.abs(z)) / math.sqrt(z.size) + 1e-13  # Acklam's bound, as in test 8
        assert fused.rules["stouffer"][(q, d)][0] == pytest.approx(np.sum(z) / math.sqrt(z.size), abs=tolerance)


def list_rules(runs: dict, depth: int) -> tuple[dict, dict]:
    """RRF and rsf in plain Python over each arm's top `depth` (trec_eval order): RRF adds
    1/(K + rank), rsf adds (s - min)/(max - min) over that top (1 if it is flat); an arm whose top does
    not hold the document adds 0."""
    rrf = dict.fromkeys(candidate_union(runs, depth), 0.0)
    rsf = dict(rrf)
    for run in runs.values():
        for q, docs in run.items():
            top = trec_order(docs)[:depth]
            low, high = min(docs[d] for d in top), max(docs[d] for d in top)
            for rank, d in enumerate(top, start=1):
                rrf[(q, d)] += 1 / (K + rank)
                rsf[(q, d)] += 1.0 if high == low else (docs[d] - low) / (high - low)
    return rrf, rsf


@examples(10)
@given(runs=runs_strategy, nulls=nulls_strategy, depth=st.integers(1, len(DOCS)))
def test_rrf_and_rsf_on_truncated_lists(runs, nulls, depth):
    """With candidate depth L below the list lengths (where ranx has no counterpart), rrf and rsf
    read only each arm's own top L: RRF votes 1/(K + rank) there and 0 elsewhere, rsf min-max
    normalises over that top L (a flat top maps to 1) and adds 0 elsewhere; ties in raw scores ranked
    by document id descending, as trec_eval does."""
    fused = fuse(runs, nulls, depth)
    rrf, rsf = list_rules(runs, depth)
    for rule, expected in (("rrf", rrf), ("rsf", rsf)):
        got = {key: score for key, (score, _) in fused.rules[rule].items()}
        assert set(got) == set(expected)
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15), (rule, key)


# 10. `rankhouse fuse`: the rules asked, and only what they need =========================================


def parsed_run(path: Path) -> dict[str, list[tuple[str, int, float]]]:
    """A fused run file as {qid: [(docno, rank, score), ...]} in file order."""
    found: dict = {}
    for line in path.read_text().splitlines():
        qid, _, docno, rank, score, _ = line.split()
        found.setdefault(qid, []).append((docno, int(rank), float(score)))
    return found


def built_models(runs: list) -> set[str]:
    return {run.model for run in runs if run.status == "built"}


def test_rrf_and_rsf_without_null_runs_build_no_p_value(tmp_path):
    """Asking rrf and rsf builds the candidates and those two rules only: no null reference, p-value,
    completeness or p-value rule, and fused_rankings ranks the two rules (no arm alone); asking fisher
    builds the p-values and Fisher, not the other rules."""
    runs, nulls = mixture_case()
    arms = {arm: write_run(tmp_path / f"{arm}.run", runs[arm]) for arm in ARMS}
    null_runs = {arm: write_run(tmp_path / f"{arm}.null", nulls[arm]) for arm in ARMS}
    with Warehouse(":memory:") as wh:
        built = built_models(fuse_runs(wh, arms, depth=8, rules=["rrf", "rsf"]))
        ranked = {rule for (rule,) in wh.sql("SELECT DISTINCT rule FROM models.fused_rankings")}
        loaded = {run_id for (run_id,) in wh.sql("SELECT DISTINCT run_id FROM raw.runs")}
    assert {"fusion_candidates", "fusion_rrf", "fusion_rsf", "fused_rankings"} <= built
    assert not built & {"null_references", "arm_p_values", "candidate_completeness", *P_RULES}
    assert ranked == {"rrf", "rsf"} and loaded == set(ARMS)
    with Warehouse(":memory:") as wh:
        built = built_models(fuse_runs(wh, arms, null_runs, depth=8, rules=["fisher", "bm25"]))
        ranked = {rule for (rule,) in wh.sql("SELECT DISTINCT rule FROM models.fused_rankings")}
    assert {"null_references", "arm_p_values", "candidate_completeness", "fusion_fisher"} <= built
    assert not built & {"fusion_rrf", "fusion_rsf", "fusion_mixture", "fusion_stouffer"}
    assert ranked == {"fisher", *ARMS}  # an arm asked ranks the arms alone too


def test_fuse_command_rrf_and_rsf_without_null_runs_match_ranx(ranx_case, tmp_path):
    """`rankhouse fuse --rule rrf --rule rsf -o DIR` with no null run writes DIR/rrf.run and DIR/rsf.run,
    byte for byte the files of the full build (every rule, with null runs), and so against ranx: the same
    scores and order up to ties (rsf twice ranx's 0.5/0.5 weighted sum)."""
    runs, _, theirs, root = ranx_case
    args = ["fuse", "--depth", "25", "-p", f"rrf_k={K}", "--db", ":memory:"]
    args += [part for arm in ARMS for part in ("--arm", f"{arm}={root / f'{arm}.run'}")]
    out = tmp_path / "fused"
    done = rankhouse(*args, "--rule", "rrf", "--rule", "rsf", "-o", out)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["rrf.run", "rsf.run"]
    assert "null_references" not in done.stderr and "lack a score" not in done.stderr
    for rule, scale in (("rrf", 1.0), ("rsf", 2.0)):
        assert (out / f"{rule}.run").read_bytes() == (root / f"{rule}.run").read_bytes(), rule
        compare_with_ranx(runs, parsed_run(out / f"{rule}.run"), theirs[rule], scale)


def test_several_rules_write_what_each_rule_writes_alone(tmp_path):
    """One `fuse` of mixture, rrf, fisher and the dense arm into a directory writes, per rule, the bytes
    that `fuse --rule R -o FILE` writes alone (with incomplete candidates, which the p-value rules leave
    out), and says so once for the p-value rules asked."""
    runs, nulls = mixture_case()
    args = ["fuse", "--depth", "8", "--db", ":memory:"]
    for arm in ARMS:
        args += ["--arm", f"{arm}={write_run(tmp_path / f'{arm}.run', runs[arm])}"]
        args += ["--null", f"{arm}={write_run(tmp_path / f'{arm}.null', nulls[arm])}"]
    asked = ["mixture", "rrf", "fisher", "dense"]
    done = rankhouse_in_process(*args, *(part for rule in asked for part in ("--rule", rule)), "-o", tmp_path / "all")
    assert done.returncode == 0, done.stderr
    assert "candidates lack a score in some arm's file: mixture, fisher leave them out" in done.stderr
    for rule in asked:
        alone = tmp_path / f"{rule}.alone.run"
        single = rankhouse_in_process(*args, "--rule", rule, "-o", alone)
        assert single.returncode == 0, single.stderr
        assert (tmp_path / "all" / f"{rule}.run").read_bytes() == alone.read_bytes(), rule
    fused = fuse(runs, nulls, depth=8)
    written = parsed_run(tmp_path / "all" / "dense.run")
    assert {(q, d): rank for q, docs in written.items() for d, rank, _ in docs} == {
        key: rank for key, (_, rank) in fused.rules["dense"].items()
    }
