"""`rankhouse compare`: the t distribution, the paired tests, the corrections and the command.

Oracles: scipy (Student's t, ttest_rel, the incomplete beta function), small independent Python and
numpy implementations over the same stored plans, and Holm's procedure worked out by hand.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import duckdb
import numpy as np
import pytest
from clirunner import rankhouse
from conftest import TREC
from scipy import special, stats

from rankhouse.comparison import CompareOptions, compare
from rankhouse.errors import RankhouseError
from rankhouse.measures import parse_measures
from rankhouse.resample import sign_flips, store_permutation_plan
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.portability import portability_problems
from rankhouse.warehouse.render import ENV, render
from rankhouse.warehouse.runner import Runner

PROJECT = Project.load()
STATS = ["paired_differences", "bootstrap_replicates", "paired_bootstrap", "paired_bootstrap_tests",
         "paired_t_tests", "paired_randomization_tests", "adjusted_p_values", "comparisons"]  # fmt: skip
MEASURES = ["AP", "nDCG@10", "P@1", "RR"]


def two_sided_t(rows: list[tuple[float, float, float]]) -> list[float]:
    """The student_t_two_sided macro over (df, x, y) rows, in order."""
    values = ", ".join(f"({i}, {df!r}, {x!r}, {y!r})" for i, (df, x, y) in enumerate(rows))
    sql = ENV.from_string(
        "WITH RECURSIVE inputs AS (SELECT * FROM (VALUES " + values + ") AS v(k, df, x, y)),\n"
        "{{ student_t_two_sided('p', 'inputs', ['k']) }}\nSELECT value FROM p ORDER BY k"
    ).render()
    return [value for (value,) in duckdb.connect().sql(sql).fetchall()]


def t_arguments(t: float, df: float) -> tuple[float, float, float]:
    return df, df / (df + t * t), t * t / (df + t * t)


# -- Student's t and the incomplete beta function ---------------------------------------------------


def test_student_t_macro_matches_scipy_to_1e_12():
    grid = [(t, df) for df in (1, 2, 3, 4, 5, 9, 10, 29, 30, 49, 100, 1000, 3079, 10000, 100000)
            for t in (0.0, 0.001, 0.1, 0.5, 1, 1.5, 1.96, 2, 2.5, 3, 5, 10, 30, 100, 1e4)]  # fmt: skip
    ours = two_sided_t([t_arguments(t, df) for t, df in grid])
    theirs = [2 * stats.t.sf(t, df) for t, df in grid]
    assert max(abs(a - b) for a, b in zip(ours, theirs)) < 1e-12
    # relative agreement wherever p is a normal double, not only in absolute terms
    assert all(abs(a - b) <= 1e-11 * b for a, b in zip(ours, theirs) if b > 1e-300)


def test_student_t_macro_matches_closed_forms_where_x_rounds_to_1():
    """df = 1 (Cauchy): p = 1 - 2 atan(t) / pi; df = 2: p = 1 - t / sqrt(2 + t^2). At t = 1e-9, x =
    df / (df + t^2) is 1 in doubles, and scipy, given t, returns 1; the macro, given y = t^2 / (df + t^2)
    as well, keeps the digits (this is why it takes both)."""
    ts = [1e-9, 1e-6, 1e-3, 0.7, 3.0, 40.0]
    cauchy = two_sided_t([t_arguments(t, 1.0) for t in ts])
    two = two_sided_t([t_arguments(t, 2.0) for t in ts])
    for t, p1, p2 in zip(ts, cauchy, two):
        assert p1 == pytest.approx(1 - 2 * math.atan(t) / math.pi, rel=1e-14, abs=1e-16)
        assert p2 == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-12, abs=1e-16)
    assert cauchy[0] < 1 and 2 * stats.t.sf(1e-9, 1) == 1.0


def test_incomplete_beta_macro_matches_scipy_betainc():
    grid = [(a, b, x) for a in (0.5, 1, 2.5, 10, 40, 300) for b in (0.5, 1, 3, 12, 50)
            for x in (0.0, 1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 1 - 1e-6, 1.0)]  # fmt: skip
    values = ", ".join(f"({i}, {a!r}, {b!r}, {x!r}, {1 - x!r})" for i, (a, b, x) in enumerate(grid))
    sql = ENV.from_string(
        "WITH RECURSIVE inputs AS (SELECT * FROM (VALUES " + values + ") AS v(k, a, b, x, y)),\n"
        "{{ incomplete_beta('beta', 'inputs', ['k']) }}\nSELECT value, iterations FROM beta ORDER BY k"
    ).render()
    rows = duckdb.connect().sql(sql).fetchall()
    assert max(abs(v - special.betainc(a, b, x)) for (v, _), (a, b, x) in zip(rows, grid)) < 1e-13
    assert max(it or 0 for _, it in rows) < 100


# -- the paired t-test on fixed per-query data -------------------------------------------------------

# per-query values of a and b on 12 queries (for one measure), written out
FIXED_A = [0.61, 0.32, 0.95, 0.18, 0.44, 0.72, 0.05, 0.83, 0.37, 0.66, 0.29, 0.51]
FIXED_B = [0.52, 0.35, 0.81, 0.22, 0.30, 0.70, 0.00, 0.79, 0.41, 0.48, 0.25, 0.50]


def run_model(name: str, tables: dict[str, list[dict]], params: dict | None = None) -> list[dict]:
    """The rendered SQL of model `name` run over hand-made input tables (models.<table>)."""
    con = duckdb.connect()
    con.sql("CREATE SCHEMA models")
    for table, rows in tables.items():
        columns = list(rows[0])
        con.execute(
            f"CREATE TABLE models.{table} AS SELECT * FROM (VALUES "
            + ", ".join("(" + ", ".join("?" for _ in columns) + ")" for _ in rows)
            + f") AS v({', '.join(columns)})",
            [row[c] for row in rows for c in columns],
        )
    result = con.sql(render(PROJECT.models[name], params))
    names = result.columns
    return [dict(zip(names, row)) for row in result.fetchall()]


def differences_rows(contrast: str, a: list[float], b: list[float]) -> list[dict]:
    system_a, system_b = contrast.split(" - ")
    return [
        {"study": "s", "subset": "all", "system_a": system_a, "system_b": system_b, "contrast": contrast,
         "measure": "AP", "query": f"q{i}", "difference": x - y}
        for i, (x, y) in enumerate(zip(a, b))
    ]  # fmt: skip


def test_paired_t_test_matches_scipy_ttest_rel_on_fixed_data():
    cases = {
        "fixed - base": (FIXED_A, FIXED_B),
        "worse - base": (FIXED_B, FIXED_A),
        "two - base": (FIXED_A[:2], FIXED_B[:2]),
        "same - base": (FIXED_A, FIXED_A),  # every difference 0: scipy says NaN, p is 1
        "shift - base": ([v + 0.25 for v in FIXED_B], FIXED_B),  # one difference everywhere: p is 0
        "one - base": (FIXED_A[:1], FIXED_B[:1]),  # one query: no test
    }
    rows = [row for contrast, (a, b) in cases.items() for row in differences_rows(contrast, a, b)]
    tests = {row["contrast"]: row for row in run_model("paired_t_tests", {"paired_differences": rows})}
    for contrast in ("fixed - base", "worse - base", "two - base"):
        a, b = cases[contrast]
        expected = stats.ttest_rel(a, b)
        assert abs(tests[contrast]["t"] - expected.statistic) < 1e-12
        assert abs(tests[contrast]["p_value"] - expected.pvalue) < 1e-12
        assert tests[contrast]["df"] == len(a) - 1
    assert math.isnan(stats.ttest_rel(FIXED_A, FIXED_A).pvalue)
    assert tests["same - base"]["p_value"] == 1.0 and tests["same - base"]["t"] is None
    shifted = stats.ttest_rel(*cases["shift - base"])
    assert tests["shift - base"]["p_value"] == 0.0 and shifted.pvalue < 1e-15
    assert tests["one - base"]["p_value"] is None and tests["one - base"]["df"] is None


# -- multiple testing: Holm and Bonferroni by hand ---------------------------------------------------


def test_holm_and_bonferroni_match_the_hand_worked_example():
    """Four comparisons with one baseline, p = 0.01, 0.04, 0.03, 0.005 (m = 4). Holm, by hand: in
    ascending order 0.005, 0.01, 0.03, 0.04 are multiplied by 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04, and
    each adjusted value is the largest so far (monotone): 0.02, 0.03, 0.06, 0.06. Bonferroni: times 4,
    0.04, 0.16, 0.12, 0.02. At alpha 0.05 both reject the p = 0.005 and 0.01 comparisons. A second
    baseline's comparisons are a family of their own, and an undefined p (NULL) is no member."""
    given = [("r1", "AP", 0.01), ("r1", "nDCG@10", 0.04), ("r2", "AP", 0.03), ("r2", "nDCG@10", 0.005),
             ("r1", "P@1", None), ("r3", "AP", 0.01)]  # fmt: skip
    rows = [
        {"study": "s", "subset": "all", "system_a": a, "system_b": "r3" if a != "r3" else "r1",
         "contrast": f"{a} - {'r3' if a != 'r3' else 'r1'}", "measure": m, "p_value": p}
        for a, m, p in given
    ]  # fmt: skip
    adjusted = run_model("adjusted_p_values", {"paired_t_tests": rows}, {"significance_test": "t"})
    by = {(r["system_a"], r["measure"]): r for r in adjusted}
    holm = {("r1", "AP"): 0.03, ("r1", "nDCG@10"): 0.06, ("r2", "AP"): 0.06, ("r2", "nDCG@10"): 0.02}
    bonferroni = {("r1", "AP"): 0.04, ("r1", "nDCG@10"): 0.16, ("r2", "AP"): 0.12, ("r2", "nDCG@10"): 0.02}
    for key in holm:
        assert by[key]["p_holm"] == pytest.approx(holm[key], abs=1e-15)
        assert by[key]["p_bonferroni"] == pytest.approx(bonferroni[key], abs=1e-15)
        assert by[key]["family_size"] == 4
    assert {k for k in holm if by[k]["p_holm"] < 0.05} == {("r1", "AP"), ("r2", "nDCG@10")}
    assert {k for k in holm if by[k]["p_bonferroni"] < 0.05} == {("r1", "AP"), ("r2", "nDCG@10")}
    assert by[("r1", "P@1")]["p_holm"] is None and by[("r1", "P@1")]["family_rank"] is None
    assert by[("r3", "AP")]["family_size"] == 1 and by[("r3", "AP")]["p_holm"] == 0.01


def test_holm_ties_do_not_depend_on_their_order():
    rows = [{"study": "s", "subset": "all", "system_a": a, "system_b": "b", "contrast": f"{a} - b",
             "measure": "AP", "p_value": p} for a, p in (("x", 0.02), ("y", 0.02), ("z", 0.001))]  # fmt: skip
    adjusted = {r["system_a"]: r["p_holm"] for r in run_model("adjusted_p_values", {"paired_t_tests": rows})}
    assert adjusted == pytest.approx({"z": 0.003, "x": 0.04, "y": 0.04})


# -- end to end on synthetic runs: the resampling tests against independent implementations ------------


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """Qrels and three runs of 40 queries, made with a fixed seed: a (the baseline), b, and c, which is
    a under another name (so that every difference c - a is 0)."""
    root = tmp_path_factory.mktemp("compare")
    rng = np.random.default_rng(14)
    qrels, runs = [], {"a": [], "b": [], "c": []}
    for q in range(40):
        grades = rng.choice([0, 0, 0, 1, 2], size=25)
        qrels += [f"q{q:02d} 0 d{d:02d} {g}" for d, g in enumerate(grades)]
        for name in ("a", "b"):
            order = rng.permutation(25)
            runs[name] += [f"q{q:02d} Q0 d{d:02d} {r + 1} {100 - r} {name}" for r, d in enumerate(order)]
    runs["c"] = [line[:-1] + "c" for line in runs["a"]]
    (root / "qrels").write_text("\n".join(qrels) + "\n")
    for name, lines in runs.items():
        (root / name).write_text("\n".join(lines) + "\n")
    return root


def synthetic_compare(root, test: str, replicates: int = 2000, seed: int = 5):
    wh = Warehouse(":memory:")
    options = CompareOptions(baseline="a", test=test, replicates=replicates, seed=seed)
    result = compare(wh, root / "qrels", [root / "a", root / "b", root / "c"], MEASURES, options)
    return wh, result


def per_query(wh: Warehouse, system: str, measure: str) -> dict[str, float]:
    """A system's per-query values of a measure (by any of its names: Top-1 is P@1)."""
    measure = parse_measures([measure])[0].canonical
    rows = wh.sql("SELECT query, value FROM models.query_measures WHERE system = ? AND measure = ?", [system, measure])
    return dict(rows)


def units(value: float) -> int:
    """A value in whole 1e-17 units, rounded half away from zero (as SQL's round)."""
    scaled = value * 1e17
    return int(math.copysign(math.floor(abs(scaled) + 0.5), scaled))


def paired_units(wh: Warehouse, measure: str) -> list[int]:
    """The differences b - a in units, in the plans' order of queries (qid order)."""
    va, vb = per_query(wh, "a", measure), per_query(wh, "b", measure)
    return [units(vb[q] - va[q]) for q in sorted(va)]


def test_t_test_end_to_end_matches_scipy(synthetic):
    wh, result = synthetic_compare(synthetic, "t")
    with wh:
        for m in MEASURES:
            va, vb = per_query(wh, "a", m), per_query(wh, "b", m)
            expected = stats.ttest_rel([vb[q] for q in sorted(vb)], [va[q] for q in sorted(va)])
            assert abs(result.differences["b"][m].p_value - expected.pvalue) < 1e-12
            assert result.differences["c"][m].p_value == 1.0  # c is a: every difference 0
        assert result.family_size == 2 * len(MEASURES)


def test_randomization_test_equals_an_independent_implementation(synthetic):
    wh, result = synthetic_compare(synthetic, "randomization")
    with wh:
        signs = np.zeros((2000, 40), dtype=np.int64)
        plan = "SELECT replicate, item, sign FROM raw.permutation_plans WHERE plan = 'compare_permutation'"
        for r, i, s in wh.sql(plan):
            signs[r, i] = s
        assert (signs == sign_flips(40, 2000, 6)).all()  # the stored plan is the seeded one (seed + 1)
        tied = 0
        for m in MEASURES:
            d = paired_units(wh, m)
            observed = abs(sum(d))
            flipped = [abs(sum(int(s) * u for s, u in zip(row, d))) for row in signs]
            margin = 40 * 100000  # 1e-12 per difference, in 1e-17 units: sums this close are a tie
            extreme = sum(1 for v in flipped if v >= observed - margin)
            tied += sum(1 for v in flipped if abs(v - observed) <= margin)
            row = wh.sql("SELECT extreme, replicates, p_value FROM models.paired_randomization_tests "
                         "WHERE system_a = 'b' AND measure = ?", [m])[0]  # fmt: skip
            assert row == (extreme, 2000, (1 + extreme) / (1 + 2000))
            assert result.differences["b"][m].p_value == (1 + extreme) / 2001
            assert result.differences["c"][m].p_value == 1.0
        assert tied > 0  # P@1's differences are -1, 0 and 1: exact ties occur and count as extreme


def test_bootstrap_interval_and_test_equal_numpy_over_the_same_plan(synthetic):
    wh, result = synthetic_compare(synthetic, "bootstrap")
    with wh:
        draws = np.zeros((2000, 40), dtype=np.int64)
        for r, k, i in wh.sql("SELECT replicate, draw, item FROM raw.resample_plans WHERE plan = 'compare_bootstrap'"):
            draws[r, k] = i
        for m in MEASURES:
            d = paired_units(wh, m)
            total = sum(d)
            sums = [sum(d[i] for i in row) for row in draws.tolist()]
            # |mean* - mean| >= |mean| with the same n in every replicate: |U* - U| >= |U|, in integers, a
            # difference within 1e-12 of a mean (40 x 1e5 units of the sums) a tie
            extreme = sum(1 for s in sums if abs(s - total) >= abs(total) - 40 * 100000)
            means = np.array([s / 1e17 / 40 for s in sums])
            low, high = np.quantile(means, [0.025, 0.975])
            got = result.differences["b"][m]
            assert got.p_value == (1 + extreme) / 2001
            assert got.ci_low == pytest.approx(low, abs=1e-15) and got.ci_high == pytest.approx(high, abs=1e-15)
            assert got.difference == pytest.approx(total / 1e17 / 40, abs=1e-16)


def test_same_inputs_give_the_same_p_values(synthetic):
    first = {t: synthetic_compare(synthetic, t) for t in ("randomization", "bootstrap", "t")}
    again = {t: synthetic_compare(synthetic, t) for t in ("randomization", "bootstrap", "t")}
    for t in first:
        assert first[t][1].as_dict() == again[t][1].as_dict()
    wh, result = first["randomization"]
    with wh:  # in the same warehouse, with one thread: every model skipped or rebuilt to the same figures
        wh.sql("SET threads = 1")
        rerun = compare(wh, synthetic / "qrels", [synthetic / n for n in "abc"], MEASURES,
                        CompareOptions(baseline="a", test="randomization", replicates=2000, seed=5))  # fmt: skip
        assert rerun.as_dict() == result.as_dict()
    other_seed = synthetic_compare(synthetic, "randomization", seed=6)[1]
    assert other_seed.as_dict() != result.as_dict()
    for wh, _ in [*first.values(), *again.values()]:
        wh.close()


# -- ties: the measures that take few values, against exact rational arithmetic -------------------------

TIED = ["P@10", "Success@3", "R@10", "Top-1", "AP"]


def tied_runs(root, queries: int, seed: int, relevant: int | None = None) -> dict[str, dict[str, list[Fraction]]]:
    """Graded qrels (30 documents a query, 3 to 9 of them relevant, or `relevant`) and runs `base`, `r1` and
    `r2` (every document, distinct scores) of `queries` queries, written to `root`; returns each run's exact
    values of P@10, Success@3, R@10 and Top-1 per query (qid order), as fractions computed here from the
    files."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {"base": [], "r1": [], "r2": []}
    exact: dict[str, dict[str, list[Fraction]]] = {run: {m: [] for m in TIED[:4]} for run in runs}
    for q in range(queries):
        size = relevant or int(rng.integers(3, 10))
        relevant_docs = set(rng.choice(30, size=size, replace=False).tolist())
        qrels += [f"q{q:03d} 0 d{d:02d} {int(rng.integers(1, 3)) if d in relevant_docs else 0}" for d in range(30)]
        for name in runs:
            order = rng.permutation(30).tolist()
            runs[name] += [f"q{q:03d} Q0 d{d:02d} {r + 1} {100 - r} {name}" for r, d in enumerate(order)]
            hits = [d in relevant_docs for d in order]
            exact[name]["P@10"].append(Fraction(sum(hits[:10]), 10))
            exact[name]["Success@3"].append(Fraction(int(any(hits[:3]))))
            exact[name]["R@10"].append(Fraction(sum(hits[:10]), len(relevant_docs)))
            exact[name]["Top-1"].append(Fraction(int(hits[0])))
    (root / "qrels").write_text("\n".join(qrels) + "\n")
    for name, lines in runs.items():
        (root / name).write_text("\n".join(lines) + "\n")
    return exact


def whole(differences: list[Fraction]) -> np.ndarray:
    """Exact differences as whole numbers of one common unit (1 / their denominators' lcm)."""
    unit = math.lcm(*(d.denominator for d in differences))
    return np.array([int(d * unit) for d in differences], dtype=np.int64)


def flipped_counts(signs: np.ndarray, d: np.ndarray) -> tuple[int, int]:
    """Over the sign vectors (rows), how many give |sum s_i d_i| >= |sum d_i|, and how many exactly =."""
    observed = abs(int(d.sum()))
    at_least = equal = 0
    for chunk in range(0, len(signs), 20000):
        sums = np.abs(signs[chunk : chunk + 20000].astype(np.int64) @ d)
        at_least += int((sums >= observed).sum())
        equal += int((sums == observed).sum())
    return at_least, equal


def every_sign_vector(units: int) -> np.ndarray:
    """All 2^units sign vectors, row r's sign i -1 where bit i of r is set."""
    return (1 - 2 * ((np.arange(2**units)[:, None] >> np.arange(units)) & 1)).astype(np.int8)


@pytest.mark.parametrize("relevant", [None, 3], ids=["3 to 9 relevant", "3 relevant: R@10 in thirds"])
def test_randomization_test_of_tied_measures_equals_the_exact_enumeration(tmp_path, monkeypatch, relevant):
    """On 14 queries every one of the 2^14 sign vectors is the plan (compare's seeded plan replaced):
    the randomization test is then exact, and its count of |S*| >= |S| must be the one of exact rational
    arithmetic on the values computed here from the files (P@10's tenths, R@10's fractions of the
    relevant documents, 0 and 1), ties included; AP's, on its exact doubles. Comparing the sums of the
    differences' doubles exactly (as the test did before) gets P@10's count wrong; so would rounding each
    difference to a coarser unit, for R@10's thirds (2/3 - 1/3 - 1/3 is not 0 in any rounded units)."""
    from rankhouse import comparison as compare_module
    from rankhouse.resample import store_signs

    n = 14
    exact = tied_runs(tmp_path, n, seed=37, relevant=relevant)
    every = every_sign_vector(n)

    def every_flip(wh, plan, units, replicates, seed):  # noqa: ANN001, ARG001
        assert units == n
        return store_signs(wh, plan, every, {"kind": "every sign vector", "units": n})

    monkeypatch.setattr(compare_module, "store_permutation_plan", every_flip)
    with Warehouse(":memory:") as wh:
        options = CompareOptions(baseline="base", test="randomization", replicates=2**n)
        result = compare(wh, tmp_path / "qrels", [tmp_path / r for r in ("base", "r1", "r2")], TIED, options)
        ties, wrong_before = 0, 0
        for run in ("r1", "r2"):
            for m in TIED:
                if m == "AP":
                    va, vb = per_query(wh, run, m), per_query(wh, "base", m)
                    d = [Fraction(va[q]) - Fraction(vb[q]) for q in sorted(va)]
                else:
                    d = [a - b for a, b in zip(exact[run][m], exact["base"][m])]
                    # the measure models give these values, as doubles
                    assert [Fraction(v).limit_denominator(1000) for _, v in sorted(per_query(wh, run, m).items())] \
                        == exact[run][m]  # fmt: skip
                at_least, equal = flipped_counts(every, whole(d))
                canonical = parse_measures([m])[0].canonical
                row = wh.sql("SELECT extreme, replicates FROM models.paired_randomization_tests "
                             "WHERE system_a = ? AND measure = ?", [run, canonical])[0]  # fmt: skip
                assert row == (at_least, 2**n), (run, m)
                # the exact permutation p-value is at_least / 2^n; the plan's p counts the observed once more
                assert result.differences[run][m].p_value == (1 + at_least) / (1 + 2**n)
                ties += equal - 2  # beyond the identity and its negation, which tie always
                va, vb = per_query(wh, run, m), per_query(wh, "base", m)
                before = np.array([units(va[q] - vb[q]) for q in sorted(va)], dtype=object)
                old = sum(1 for row in every if abs(sum(int(s) * u for s, u in zip(row, before))) >= abs(sum(before)))
                wrong_before += old != at_least
        assert ties > 1000  # the discrete measures tie, often
        assert wrong_before > 0


def test_randomization_test_of_tied_measures_agrees_with_a_large_independent_sample(tmp_path):
    """On 200 queries (the issue's set-up): over compare's own plan (10,000 seeded replicates) the count
    is the exact one; and the p-value is within 4.5 standard errors of an independent sign-flip test of
    200,000 flips (another seed), in exact integers."""
    exact = tied_runs(tmp_path, 200, seed=2007)
    with Warehouse(":memory:") as wh:
        options = CompareOptions(baseline="base", test="randomization")
        result = compare(wh, tmp_path / "qrels", [tmp_path / r for r in ("base", "r1", "r2")], TIED[:4], options)
        plan = np.zeros((options.replicates, 200), dtype=np.int8)
        for r, i, sign in wh.sql("SELECT replicate, item, sign FROM raw.permutation_plans"):
            plan[r, i] = sign
    independent = sign_flips(200, 200_000, 1_000_003)
    for run in ("r1", "r2"):
        for m in TIED[:4]:
            d = whole([a - b for a, b in zip(exact[run][m], exact["base"][m])])
            at_least, _ = flipped_counts(plan, d)
            p = result.differences[run][m].p_value
            assert p == (1 + at_least) / (1 + options.replicates), (run, m)
            reference, _ = flipped_counts(independent, d)
            q = reference / len(independent)
            assert abs(p - q) <= 4.5 * math.sqrt(q * (1 - q) / options.replicates) + 1e-4, (run, m, p, q)


def test_bootstrap_test_of_tied_measures_equals_exact_arithmetic(tmp_path):
    """The bootstrap test's count of |d*_r - d| >= |d| over compare's plan, in exact rationals."""
    exact = tied_runs(tmp_path, 60, seed=11)
    with Warehouse(":memory:") as wh:
        options = CompareOptions(baseline="base", test="bootstrap", replicates=4000)
        result = compare(wh, tmp_path / "qrels", [tmp_path / r for r in ("base", "r1", "r2")], TIED[:4], options)
        draws = np.zeros((options.replicates, 60), dtype=np.int64)
        for r, k, i in wh.sql("SELECT replicate, draw, item FROM raw.resample_plans"):
            draws[r, k] = i
    for run in ("r1", "r2"):
        for m in TIED[:4]:
            d = whole([a - b for a, b in zip(exact[run][m], exact["base"][m])])
            total, sums = int(d.sum()), d[draws].sum(axis=1)
            extreme = int((np.abs(sums - total) >= abs(total)).sum())  # the same 60 draws: |U* - U| >= |U|
            assert result.differences[run][m].p_value == (1 + extreme) / (1 + options.replicates), (run, m)


# -- plans -------------------------------------------------------------------------------------------


def test_permutation_plans_are_stored_once_and_fingerprinted(wh):
    first = store_permutation_plan(wh, "p", 7, 50, 3)
    assert first.status == "loaded" and first.rows == 350
    assert store_permutation_plan(wh, "p", 7, 50, 3).status == "unchanged"
    assert wh.sql("SELECT DISTINCT sign FROM raw.permutation_plans ORDER BY sign") == [(-1,), (1,)]
    params = {"permutation_plan": "p", "contrasts": [["a", "b"]], "contrast_measures": ["AP"]}
    wh.open_gate()  # the fingerprint covers every ancestor, the measures' qrels among them
    before = Runner(wh, Project.load(params=params), params).fingerprint("paired_randomization_tests")
    assert store_permutation_plan(wh, "p", 7, 50, 4).status == "loaded"
    after = Runner(wh, Project.load(params=params), params).fingerprint("paired_randomization_tests")
    assert before != after


def test_a_study_generates_a_sign_flip_plan_over_its_queries(wh):
    from conftest import FIXTURES

    from rankhouse.generators import GENERATORS, Context
    from rankhouse.loaders import load_queries

    load_queries(wh, FIXTURES / "retrieval" / "queries.csv", "tiny")
    said: list[str] = []
    context = Context(wh, said.append, lambda label: lambda done, total: None, lambda spec: None)
    GENERATORS["permutation_plan"].run(context, "flips", {"corpus": "tiny", "seed": 3, "replicates": 10})
    assert wh.sql("SELECT count(*), count(DISTINCT item), max(replicate) FROM raw.permutation_plans") == [(40, 4, 9)]
    assert "loaded 40 rows into raw.permutation_plans as flips" in said[0]


# -- portability ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
@pytest.mark.parametrize("resample", ["drop", "within"])
def test_comparison_models_are_portable_with_parameters(test, resample):
    params = {"contrasts": [["a", "b"], ["c", "b"]], "contrast_measures": ["AP", "nDCG@10"], "bootstrap_plan": "x",
              "permutation_plan": "y", "significance_test": test, "resample": resample}  # fmt: skip
    project = Project.load(params=params)
    for name in STATS:
        assert portability_problems(project.models[name], params) == []


# -- the command -----------------------------------------------------------------------------------


def test_compare_command_on_trec_eval_sample():
    runs = [TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc"]
    done = rankhouse("compare", *runs, "-m", "AP", "-m", "P.10", "--format", "json", "--replicates", "500")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    evaluated = json.loads(rankhouse("eval", *runs, "-m", "map", "-m", "P.10", "--format", "json").stdout)
    assert table["baseline"] == "results.test" and table["test"] == "t" and table["correction"] == "holm"
    assert table["queries"] == 3 and table["family_size"] == 2
    for run in ("results.test", "results.trunc"):
        assert table["runs"][run]["AP"]["mean"] == evaluated[run]["all"]["map"]
    trunc = table["runs"]["results.trunc"]["AP"]
    assert trunc["difference"] == pytest.approx(evaluated["results.trunc"]["all"]["map"]
                                                - evaluated["results.test"]["all"]["map"], abs=1e-15)  # fmt: skip
    assert trunc["ci_low"] <= trunc["difference"] <= trunc["ci_high"] and trunc["significant"] is False
    assert "difference" not in table["runs"]["results.test"]["AP"]
    text = rankhouse("compare", *runs, "-m", "AP", "--baseline", "results.trunc", "--replicates", "500")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[1].split() == ["run", "mean", "diff", "[95%", "CI]", "p"]
    assert lines[3].startswith("results.test ") and "+0.0770 [" in lines[3]
    assert lines[4].split() == ["results.trunc", "0.1016"]
    assert any("baseline results.trunc" in line for line in lines)
    for output_format, marker in (("markdown", "| run | AP mean |"), ("latex", "\\begin{tabular}"),
                                  ("csv", "run,measure,mean,baseline")):  # fmt: skip
        shown = rankhouse("compare", *runs, "-m", "AP", "--format", output_format, "--test", "randomization",
                          "--replicates", "200")  # fmt: skip
        assert shown.returncode == 0 and marker in shown.stdout, shown.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline", "nope"], "error: the baseline 'nope' is not one of the runs: results.test, results.trunc"),
        (["--test", "wilcoxon"], "error: unknown test 'wilcoxon': --test is one of t, randomization, bootstrap"),
        (["--correction", "fdr"], "error: unknown correction 'fdr'"),
        (["--alpha", "0"], "error: --alpha must be between 0 and 1 (exclusive), not 0.0"),
        (["--alpha", "1.5"], "error: --alpha must be between 0 and 1"),
        (["--replicates", "0"], "error: --replicates must be a whole number of at least 1"),
        (["--format", "html"], "error: --format is one of text, markdown, latex, json, csv"),
        (["-m", "NumRet"], "error: measure NumRet is aggregated over queries as a sum"),
    ],
)
def test_compare_usage_errors(args, message):
    measures = [] if "-m" in args else ["-m", "AP"]
    done = rankhouse("compare", TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc", *measures, *args)
    assert done.returncode == 2
    assert done.stderr.startswith(message) and "Traceback" not in done.stderr


def test_compare_takes_runs_as_name_equals_path(tmp_path):
    """Two runs with one file name in two folders: refused unnamed (naming the fix), compared when named
    NAME=PATH, the baseline by its NAME, each run's figures its own file's (rankhouse eval's)."""
    for folder, source in (("d1", "results.test"), ("d2", "results.trunc")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run.txt").write_bytes((TREC / source).read_bytes())
    qrels = TREC / "qrels.test"
    unnamed = rankhouse("compare", qrels, tmp_path / "d1" / "run.txt", tmp_path / "d2" / "run.txt", "-m", "AP")
    assert unnamed.returncode == 2 and "Traceback" not in unnamed.stderr
    assert unnamed.stderr.startswith("error: 2 runs would be named 'run.txt'")
    assert "name each with NAME=PATH" in unnamed.stderr
    base, trunc = f"base={tmp_path / 'd1' / 'run.txt'}", f"trunc={tmp_path / 'd2' / 'run.txt'}"
    named = rankhouse("compare", qrels, base, trunc, "-m", "AP", "-m", "P@10", "--baseline", "trunc",
                      "--format", "json", "--replicates", "200")  # fmt: skip
    assert named.returncode == 0, named.stderr
    table = json.loads(named.stdout)
    evaluated = json.loads(rankhouse("eval", qrels, TREC / "results.test", TREC / "results.trunc", "-m", "map",
                                     "-m", "P.10", "--format", "json").stdout)  # fmt: skip
    assert table["baseline"] == "trunc" and list(table["runs"]) == ["base", "trunc"]
    for name, run in (("base", "results.test"), ("trunc", "results.trunc")):
        assert table["runs"][name]["AP"]["mean"] == evaluated[run]["all"]["map"]
        assert table["runs"][name]["P@10"]["mean"] == evaluated[run]["all"]["P_10"]
    assert table["runs"]["base"]["P@10"]["difference"] == pytest.approx(0.1, abs=1e-15)


def test_compare_needs_two_runs_and_a_measure():
    one = rankhouse("compare", TREC / "qrels.test", TREC / "results.test", "-m", "AP")
    assert one.returncode == 2 and "error: compare needs at least two runs" in one.stderr
    with Warehouse(":memory:") as wh, pytest.raises(RankhouseError, match="name the measures to compare"):
        compare(wh, TREC / "qrels.test", [TREC / "results.test", TREC / "results.trunc"], None)
