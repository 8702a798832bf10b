"""The report in a real browser: each study kind's report.html opened in headless Chromium (tests/browser.py,
through its command line: no Python dependency), which takes a screenshot and says that the page rendered,
that every figure of the page is there with a box of its own and every data mark painted, that nothing
overflows the window, and that the page asked for nothing beyond its file (the network log). A control page
with an outside reference and an empty figure shows that the checks catch both.

Skipped when Chromium is not on PATH (`make test` says so; .ci/run installs Debian's `chromium`). With
RANKHOUSE_REPORT_SCREENSHOTS=DIR the screenshots of the kinds docs/studies.md shows (DOCS_SHOTS) are also
copied there as report-<kind>.png: `RANKHOUSE_REPORT_SCREENSHOTS=docs/img pytest tests/report/test_report_browser.py`
makes the pictures of docs/studies.md ("Reports")."""

from __future__ import annotations

import re

import pytest
from browser import chromium, problems
from conftest import copied
from report_pages import SVG

pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium is not on PATH: the browser test is skipped")


@pytest.mark.parametrize("kind", ["retrieval", "fusion", "evidence", "lanes"])
def test_each_report_renders_every_figure_and_asks_for_nothing(study_reports, kind, tmp_path):
    _, folder, _ = study_reports[kind]
    assert problems(folder / "report.html", tmp_path, kind) == []


def test_the_trec_report_that_study_run_wrote_renders(trec_sample_run, tmp_path):
    root, _ = trec_sample_run
    folder = copied(root / "out", tmp_path / "out")
    (folder / "report.html").write_bytes((root / "out" / "report.html").read_bytes())
    assert problems(folder / "report.html", tmp_path / "browser", "trec") == []


def test_the_checks_catch_an_outside_request_and_an_empty_figure(study_reports, tmp_path):
    _, folder, html = study_reports["lanes"]
    first = SVG.search(html).group(0)
    emptied = re.sub(r'width="[\d.]+" height="[\d.]+"', 'width="0" height="0"', first, count=1)
    page = tmp_path / "control.html"
    page.write_text(html.replace(first, emptied).replace(
        "</main>", '<img src="http://127.0.0.1:9/pixel.png" alt=""></main>'))  # fmt: skip
    found = problems(page, tmp_path / "browser", None)
    assert any(p.startswith(f"figure {SVG.search(html).group(1)} at") for p in found), found
    assert any("requests left the file: ['http://127.0.0.1:9/pixel.png']" in p for p in found), found
