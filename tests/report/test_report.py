"""`rankhouse report DIR` (rankhouse/report/): each figure's data against the model's table it was drawn
from, read back from the warehouse of the session's studies with SQL of the test's own; the plots' geometry
against plain arithmetic; the same bytes from the same directory, wherever it is; the Markdown variant; the
errors; and that the report needs the directory only (it imports no warehouse and works on a copy).

The studies are the session fixtures of tests/conftest.py (their output directories, copied without the
run files: the report reads nothing else), and trec_sample run here by `rankhouse study run --out`, which
also writes the report (the command's last step)."""

from __future__ import annotations

import hashlib
import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from clirunner import error_line, rankhouse, rankhouse_in_process, refused
from conftest import copied
from report_pages import SVG, figures, marks

from rankhouse.paths import ROOT
from rankhouse.report import build, plots
from rankhouse.report.plots import Bar, Interval, Ranks
from rankhouse.report.sections import slug  # how figure ids are named


# -- reading a report back (report_pages.py: its figures and their marks) ----------------------
def drawn_differences(svg: ET.Element) -> list[float]:
    """The values a sorted-difference plot draws, read back from its paths' geometry: each horizontal step
    is a run of equal values, its width the run's length, its height the value (through the y axis)."""
    n = int(svg.get("data-queries"))
    left, top, right, bottom = map(float, svg.get("data-plot").split())
    low, high = float(svg.get("data-y-low")), float(svg.get("data-y-high"))
    values = []
    for path in (e for e in svg.iter() if e.get("class") == "mark"):
        for x, y, x_end in re.findall(r"L([\d.]+),([\d.]+) H([\d.]+)", path.get("d")):
            count = round((float(x_end) - float(x)) / ((right - left) / n))
            values += [low + (bottom - float(y)) / (bottom - top) * (high - low)] * count
    return sorted(values, reverse=True)


def freeze_id(fixture) -> str:  # noqa: ANN001
    return fixture.results["freeze_id"]


# -- the plots: geometry against plain arithmetic -------------------------------------------------
def test_forest_places_each_interval_on_one_linear_axis():
    rows = [Interval("a", 0.12, 0.05, 0.2), Interval("b", -0.03, -0.1, 0.01), Interval("c", 0.0, -0.02, 0.02)]
    svg = ET.fromstring(plots.forest("f", "t", rows, axis="x"))
    found = marks(svg)
    assert [(m["label"], float(m["estimate"]), float(m["low"]), float(m["high"])) for m in found] == [
        (r.label, r.estimate, r.low, r.high) for r in rows
    ]
    groups = [e for e in svg.iter() if e.get("class") == "mark"]
    ns = "{http://www.w3.org/2000/svg}"
    centres = [float(g.find(f"{ns}rect").get("x")) + 4 for g in groups]
    lines = [(float(g.find(f"{ns}line").get("x1")), float(g.find(f"{ns}line").get("x2"))) for g in groups]
    # one linear map value -> x, fitted on two points, must place every other point (to the 0.01 px written)
    slope = (centres[0] - centres[1]) / (rows[0].estimate - rows[1].estimate)
    at = lambda v: centres[0] + (v - rows[0].estimate) * slope  # noqa: E731
    for r, centre, (x1, x2) in zip(rows, centres, lines):
        assert centre == pytest.approx(at(r.estimate), abs=0.01)
        assert (x1, x2) == (pytest.approx(at(r.low), abs=0.01), pytest.approx(at(r.high), abs=0.01))


def test_sorted_differences_draw_every_value_and_count_wins_ties_losses():
    rng = np.random.default_rng(7)
    values = list(rng.choice([-1.0, -0.5, 0.0, 0.25, 1.0], size=300)) + list(rng.normal(0, 0.3, 200))
    svg = ET.fromstring(plots.sorted_differences("d", "t", values, axis="x"))
    array = np.array(values)
    assert (int(svg.get("data-wins")), int(svg.get("data-ties")), int(svg.get("data-losses"))) == (
        int((array > 0).sum()), int((array == 0).sum()), int((array < 0).sum()))  # fmt: skip
    drawn = drawn_differences(svg)
    expected = sorted((v for v in values if v != 0), reverse=True)  # ties lie on the zero line, not drawn
    pixel = (float(svg.get("data-y-high")) - float(svg.get("data-y-low"))) / 180
    assert len(drawn) == len(expected) and np.allclose(drawn, expected, atol=pixel * 0.01)


def test_histogram_counts_as_numpy_does_on_its_edges():
    values = [float(v) for v in np.random.default_rng(3).integers(90, 650, 57)] + [650.0, 90.0]
    found = marks(ET.fromstring(plots.histogram("h", "t", values, axis="k")))
    edges = [float(m["low"]) for m in found] + [float(found[-1]["high"])]
    assert edges[0] <= min(values) and edges[-1] >= max(values)
    counts, _ = np.histogram(values, bins=edges)  # numpy's last bin also holds its upper edge, as the plot's
    assert [int(m["value"]) for m in found] == counts.tolist()


def test_bars_and_rank_changes_carry_their_data_and_widths_are_proportional():
    rows = [Bar("x", (3.0, None), (4.0, 5.0)), Bar("y", (-1.5, 2.0))]
    svg = ET.fromstring(plots.bars("b", "t", rows, ["s1", "s2"], axis="v"))
    found = [(m["label"], m["series"], float(m["value"])) for m in marks(svg)]
    assert found == [("x", "s1", 3.0), ("y", "s1", -1.5), ("y", "s2", 2.0)]
    widths = [float(e.get("width")) for e in svg.iter() if e.get("class") == "mark"]
    assert widths[0] / 3.0 == pytest.approx(widths[1] / 1.5, abs=0.01) == pytest.approx(widths[2] / 2.0, abs=0.01)
    ranks = [Ranks("d1", 1, {"p": 5, "q": None}), Ranks("d2", 2, {"p": 1})]
    svg = ET.fromstring(plots.rank_change("r", "t", ranks, ["p", "q"], axis="rank"))
    assert [(m["label"], m["series"], m["before"], m["after"]) for m in marks(svg)] == [
        ("d1", "p", "1", "5"), ("d1", "q", "1", ""), ("d2", "p", "2", "1")]  # fmt: skip
    dots = [float(c.get("cx")) for c in svg.iter("{http://www.w3.org/2000/svg}circle") if c.get("r") == "3"]
    # log axis: rank 5 sits log10(5) of the way from rank 1 to rank 10 (the axis ends at 10)
    start, ten = dots[1], dots[1] + (dots[0] - dots[1]) / math.log10(5)
    assert (ten - start) * math.log10(5) == pytest.approx(dots[0] - start, abs=0.02)


LONG = "balance_not_updated_after_cheque_or_cash_deposit"  # BANKING77's longest class name


def test_a_long_label_is_drawn_whole_inside_the_figure():
    """Labels are drawn right-aligned at the label column's edge: the column (and the figure) is wide enough
    for the longest, at CHAR pixels a character, never clipped at the left edge."""
    ns = "{http://www.w3.org/2000/svg}"
    figures = [
        plots.bars("b", "t", [Bar(LONG, (3.0, 1.0)), Bar("x", (1.0, 2.0))], ["s1", "s2"], axis="v"),
        plots.forest("f", "t", [Interval(LONG, 0.1, 0.0, 0.2)], axis="d"),
        plots.rank_change("r", "t", [Ranks(LONG, 3, {"s": 1})], ["s"], axis="rank"),
        plots.heatmap("h", "t", {(LONG, "c"): 0.5}, [LONG], ["c"], x_axis="x", y_axis="y"),
    ]
    for svg in figures:
        root = ET.fromstring(svg)
        label = next(t for t in root.iter(f"{ns}text") if t.text == LONG)
        assert label.get("text-anchor") == "end"
        assert float(label.get("x")) - plots.CHAR * len(LONG) >= 0, root.get("id")
        marks_x = [float(e.get("x")) for e in root.iter() if e.get("class") == "mark" and e.get("x")]
        assert all(x > float(label.get("x")) for x in marks_x), root.get("id")  # the bars right of the labels
        assert float(root.get("width")) >= max(marks_x + [0.0]), root.get("id")


def one_of_each() -> list[str]:
    return [
        plots.forest("a", "A", [Interval("x", 0.1, 0.0, 0.2)], axis="d"),
        plots.sorted_differences("b", "B", [0.5, -0.5, 0.0], axis="d"),
        plots.bars("c", "C", [Bar("x & <y>", (1.0,))], ["s"], axis="v"),
        plots.histogram("e", "E", [1.0, 2.0, 2.0], axis="k"),
        plots.rank_change("f", "F", [Ranks("x", 3, {"s": 1})], ["s"], axis="rank"),
    ]


def test_every_plot_is_accessible_and_deterministic():
    made = one_of_each()
    for svg in made:
        root = ET.fromstring(svg)  # well-formed, every text escaped
        ident = root.get("id")
        assert root.get("role") == "img" and root.get("aria-labelledby") == f"{ident}-title {ident}-desc"
        ns = "{http://www.w3.org/2000/svg}"
        assert root.find(f"{ns}title").get("id") == f"{ident}-title" and root.find(f"{ns}title").text
        assert root.find(f"{ns}desc").get("id") == f"{ident}-desc" and root.find(f"{ns}desc").text
        assert any(t.get("font-weight") == "600" for t in root.iter(f"{ns}text"))  # the axis label
    assert made == one_of_each()  # the same bytes


# -- BANKING77 (retrieval) ------------------------------------------------------------------------
def test_banking77_figures_are_the_models_tables(study_reports):
    fixture, folder, html = study_reports["retrieval"]
    wh, freeze = fixture.wh, freeze_id(fixture)
    found = figures(html)
    bootstrap = wh.sql(
        "SELECT contrast || ' (' || subset || ')', mean, ci_low, ci_high FROM results.paired_bootstrap "
        "WHERE freeze_id = ? AND study = 'banking77' ORDER BY ALL", [freeze])  # fmt: skip
    forest = sorted((m["label"], float(m["estimate"]), float(m["low"]), float(m["high"]))
                    for m in marks(found["forest-top-1"]))  # fmt: skip
    assert forest == sorted(bootstrap) and len(forest) == 2
    differences = [d for (d,) in wh.sql(
        "SELECT difference FROM results.paired_differences WHERE freeze_id = ? AND study = 'banking77' "
        "AND subset = 'all' AND contrast = 'dense - bm25' AND measure = 'Top-1'", [freeze])]  # fmt: skip
    svg = found["differences-dense-bm25-top-1"]
    assert len(differences) == 3080 == int(svg.get("data-queries"))
    assert int(svg.get("data-wins")) == sum(d > 0 for d in differences)
    assert int(svg.get("data-losses")) == sum(d < 0 for d in differences)
    assert drawn_differences(svg) == sorted((d for d in differences if d), reverse=True)  # Top-1: -1, 0 or 1
    classes = wh.sql("SELECT class, method, top1_hits, queries FROM results.class_results WHERE freeze_id = ?",
                     [freeze])  # fmt: skip
    bars = {(m["label"], m["series"], float(m["value"]), float(m["total"])) for m in marks(found["classes-top1"])}
    assert bars == {(c, m, float(h), float(q)) for c, m, h, q in classes} and len(bars) == 2 * 77


def test_banking77_tables_freeze_chain_and_provenance(study_reports):
    fixture, folder, html = study_reports["retrieval"]
    wh, freeze = fixture.wh, freeze_id(fixture)
    for method, value, low, high in wh.sql(
        "SELECT method, value, ci_low, ci_high FROM results.retrieval_metrics WHERE freeze_id = ? AND subset = 'all' "
        "AND measure = 'Top-1'", [freeze]):  # fmt: skip
        assert f'<td class="n">{value:.4f} [{low:.4f}, {high:.4f}]</td>' in html, method
    freeze_file = fixture.wh.layout.freezes / f"{freeze}.json"
    assert hashlib.sha256(freeze_file.read_bytes()).hexdigest() in html
    record = json.loads(freeze_file.read_text())
    assert all(fingerprint in html for fingerprint in record["models"].values())
    for name in ("train.csv", "test.csv"):
        assert hashlib.sha256((ROOT / "data" / "banking77" / name).read_bytes()).hexdigest() in html
    assert "rankhouse study run " in html and "rankhouse report " in html  # the reproduction commands


# -- fusion ---------------------------------------------------------------------------------------
def test_fusion_diagnostics_and_contrasts_are_the_models_tables(study_reports):
    fixture, folder, html = study_reports["fusion"]
    wh, freeze = fixture.wh, freeze_id(fixture)
    found = figures(html)
    reversals = wh.sql("SELECT rule, dense_correct_reversed, dense_wrong_corrected FROM results.reversal_totals "
                       "WHERE freeze_id = ?", [freeze])  # fmt: skip
    drawn = {(m["label"], m["series"], float(m["value"])) for m in marks(found["fusion-reversals"])}
    assert drawn == {(r, s, float(v)) for r, a, b in reversals for s, v in
                     (("dense_correct_reversed", a), ("dense_wrong_corrected", b))}  # fmt: skip
    influence = wh.sql("SELECT arm, mean_influence, median_influence FROM models.influence_summary")
    drawn = {(m["label"], m["series"], float(m["value"])) for m in marks(found["fusion-influence"])}
    assert drawn == {(arm, s, v) for arm, *v in influence for s, v in zip(("mean_influence", "median_influence"), v)}
    tail = wh.sql("SELECT arm, at_floor, candidates FROM models.tail_saturation")
    drawn = {(m["label"], float(m["value"]), float(m["total"])) for m in marks(found["fusion-tail"])}
    assert drawn == {(arm, float(n), float(c)) for arm, n, c in tail}
    first = fixture.params["contrast_measures"][0]
    for measure in fixture.params["contrast_measures"]:
        bootstrap = wh.sql("SELECT contrast, mean, ci_low, ci_high FROM results.paired_bootstrap WHERE freeze_id = ? "
                           "AND measure = ? ORDER BY ALL", [freeze, measure])  # fmt: skip
        forest = sorted(
            (m["label"], float(m["estimate"]), float(m["low"]), float(m["high"]))
            for m in marks(found[f"forest-{slug(measure)}"])
        )
        assert forest == sorted(bootstrap) and len(forest) == len(fixture.params["contrasts"])
    for a, b in fixture.params["contrasts"]:
        wins, ties, losses = wh.sql(
            "SELECT count(*) FILTER (WHERE difference > 0), count(*) FILTER (WHERE difference = 0), "
            "count(*) FILTER (WHERE difference < 0) FROM results.paired_differences WHERE freeze_id = ? "
            "AND subset = 'all' AND contrast = ? AND measure = ?", [freeze, f"{a} - {b}", first])[0]  # fmt: skip
        svg = found[f"differences-{slug(f'{a} - {b}')}-{slug(first)}"]
        counts = (int(svg.get("data-wins")), int(svg.get("data-ties")), int(svg.get("data-losses")))
        assert counts == (wins, ties, losses)


# -- lanes and evidence ---------------------------------------------------------------------------
def test_lanes_k_distribution_is_the_candidate_sets(study_reports):
    fixture, folder, html = study_reports["lanes"]
    found = figures(html)
    k = [k for (k,) in fixture.wh.sql("SELECT k FROM models.lane_topics ORDER BY topic_row")]
    bins = marks(found["lanes-k"])
    edges = [float(m["low"]) for m in bins] + [float(bins[-1]["high"])]
    assert [int(m["value"]) for m in bins] == np.histogram(k, bins=edges)[0].tolist() and sum(
        int(m["value"]) for m in bins) == len(k) == 25  # fmt: skip
    per_topic = {(m["label"], m["series"], float(m["value"])) for m in marks(found["lanes-topics"])}
    rows = fixture.wh.sql("SELECT topic, k, admitted FROM models.lane_topics")
    assert per_topic == {(t, s, float(v)) for t, k_, a in rows for s, v in (("k", k_), ("admitted", a))}


def test_evidence_contrasts_per_subset_and_task_differences(study_reports):
    fixture, folder, html = study_reports["evidence"]
    wh, freeze = fixture.wh, freeze_id(fixture)
    found = figures(html)
    for measure in fixture.params["contrast_measures"]:
        bootstrap = wh.sql(
            "SELECT contrast || ' (' || subset || CAST(queries AS VARCHAR) || ')', mean, ci_low, ci_high "
            "FROM results.paired_bootstrap WHERE freeze_id = ? AND measure = ? ORDER BY ALL",
            [freeze, measure],
        )
        forest = sorted(
            (m["label"], float(m["estimate"]), float(m["low"]), float(m["high"]))
            for m in marks(found[f"forest-{slug(measure)}"])
        )
        assert forest == sorted(bootstrap) and len(forest) == 4 * 3  # four contrasts in three subsets
    for a, b in fixture.params["contrasts"]:
        differences = [
            d
            for (d,) in wh.sql(
                "SELECT difference FROM results.paired_differences WHERE freeze_id = ? AND subset = 'all' "
                "AND contrast = ? AND measure = 'coverage' AND difference IS NOT NULL",
                [freeze, f"{a} - {b}"],
            )
        ]
        svg = found[f"differences-{a}-{b}-coverage"]
        assert int(svg.get("data-queries")) == len(differences) == 48
        assert np.allclose(drawn_differences(svg), sorted((d for d in differences if d), reverse=True), atol=1e-4)
    assert "T18" in html and "T21" in html  # the example tasks


# -- trec_sample: the report `study run --out` writes -----------------------------------------------
def test_study_run_writes_the_report_and_its_figures_are_query_measures(trec_sample_run):
    root, done = trec_sample_run
    out = root / "out"
    assert f"wrote {out / 'report.html'}" in done.stderr
    html = (out / "report.html").read_text()
    from rankhouse.warehouse import Warehouse

    with Warehouse(root / "w.duckdb", read_only=True, namespace="trec_sample") as wh:
        ap = wh.sql("SELECT system, query, value FROM results.query_measures WHERE measure = 'AP'")
        chain = wh.sql("SELECT freeze_id FROM meta.freezes")
    drawn = {(m["series"], m["label"], float(m["value"])) for m in marks(figures(html)["per-query"])}
    assert drawn == set(ap) and len(drawn) == 2 * 3  # results.trunc lacks topic 302: 0 there (complete = true)
    assert '<td class="n">1,500</td>' in html  # NumRet, a count, as a whole number
    ((freeze,),) = chain
    assert hashlib.sha256((root / "w.d" / "freezes" / f"{freeze}.json").read_bytes()).hexdigest() in html


def test_a_superseded_freeze_is_in_the_chain_with_its_hash_and_reason(tmp_path):
    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import write_outputs
    from rankhouse.warehouse import Warehouse

    protocol = tmp_path / "trec_sample.toml"
    text = (ROOT / "studies" / "trec_sample.toml").read_text().replace('path = "../', f'path = "{ROOT}/')
    protocol.write_text(text)
    with Warehouse(tmp_path / "w.duckdb") as wh:
        study = Study(Protocol.load(protocol), wh, tmp_path / "freezes")
        study.prepare()
        study.freeze()
        protocol.write_text(text.replace('description = "', 'description = "(corrected) '))
        study = Study(Protocol.load(protocol), wh, tmp_path / "freezes")
        study.prepare()
        study.freeze("trec_sample-1", "the description | said too little")
        write_outputs(study, study.evaluate(), tmp_path / "out")
    build(tmp_path / "out")
    html = (tmp_path / "out" / "report.html").read_text()
    chain = html[html.index('<section id="freezes"') : html.index('<section id="provenance"')]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(<td.*?)</tr>", chain)]
    first, second = (hashlib.sha256((tmp_path / "freezes" / f"trec_sample-{n}.json").read_bytes()).hexdigest()
                     for n in (1, 2))  # fmt: skip
    assert [[r[0], r[2], r[3], r[4], r[5]] for r in rows] == [
        ["trec_sample-1", first, "", "", ""],
        ["trec_sample-2 (evaluated)", second, first, "trec_sample-1", "the description | said too little"],
    ]
    assert "| trec_sample-2 (evaluated) |" in (tmp_path / "out" / "report.md").read_text()
    assert "the description \\| said too little" in (tmp_path / "out" / "report.md").read_text()


# -- bytes, the Markdown variant, a copy without the warehouse --------------------------------------
def test_the_same_directory_gives_the_same_bytes_anywhere(study_reports, tmp_path):
    fixture, folder, html = study_reports["fusion"]
    files = {p.relative_to(folder): p.read_bytes() for p in [folder / "report.html", folder / "report.md",
                                                             *sorted((folder / "figures").iterdir())]}  # fmt: skip
    elsewhere = copied(folder, tmp_path / "elsewhere" / "deeper")
    build(elsewhere)
    build(elsewhere)  # twice: nothing accumulates
    again = {
        p.relative_to(elsewhere): p.read_bytes()
        for p in [elsewhere / "report.html", elsewhere / "report.md", *sorted((elsewhere / "figures").iterdir())]
    }
    assert again == files


def test_the_markdown_variant_links_the_same_figures(study_reports):
    for name, (fixture, folder, html) in study_reports.items():
        markdown = (folder / "report.md").read_text()
        linked = re.findall(r"!\[[^\]]*\]\(figures/([^)]+)\.svg\)", markdown)
        inline = {match.group(1): match.group(0) for match in SVG.finditer(html)}
        assert linked == list(inline) and linked, name
        for ident in linked:
            assert (folder / "figures" / f"{ident}.svg").read_text() == inline[ident] + "\n"
        assert "| measure |" in markdown and f"# {fixture.results['study']}" in markdown.splitlines()[0]
        assert sorted(p.name for p in folder.glob("*.md")) == ["report.md"], name  # one Markdown report


def test_report_html_is_self_contained(study_reports):
    for name, (fixture, folder, html) in study_reports.items():
        assert "default-src 'none'" in html and "<script" not in html.lower(), name
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html, re.I), name
        ids = re.findall(r'\sid="([^"]+)"', html)
        assert len(ids) == len(set(ids)), name


def test_the_report_imports_no_warehouse(study_reports, tmp_path):
    """Built in a fresh interpreter from a copy: neither duckdb nor rankhouse.warehouse is imported."""
    folder = copied(study_reports["retrieval"][1], tmp_path / "copy")
    script = (
        "import sys; from rankhouse.report import build; build(sys.argv[1]); "
        "print(sorted(m for m in sys.modules if m == 'duckdb' or m.startswith('rankhouse.warehouse')))"
    )
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (folder / "report.html").read_bytes() == (study_reports["retrieval"][1] / "report.html").read_bytes()


# -- errors ---------------------------------------------------------------------------------------
def test_a_directory_without_results_json_is_one_clear_error(tmp_path):
    (tmp_path / "per_query.csv").write_text("method,qid\n")
    done = rankhouse("report", tmp_path)
    assert done.stderr.count("\n") == 1 and error_line(done).startswith(f"error: {tmp_path / 'results.json'} not found")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["per_query.csv"]  # nothing written
    refused(rankhouse_in_process("report", tmp_path / "missing"), "is not a directory")
    (tmp_path / "results.json").write_text("{not json")
    refused(rankhouse_in_process("report", tmp_path), "results.json is not valid JSON")
    (tmp_path / "results.json").write_text('{"study": "x"}')
    refused(rankhouse_in_process("report", tmp_path), "is not a study's results.json (it has no `methods`)")
    refused(rankhouse_in_process("report", tmp_path, "--format", "pdf"), "--format is html, md or both, not 'pdf'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["per_query.csv", "results.json"]
