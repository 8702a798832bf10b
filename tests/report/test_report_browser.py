"""The report in a real browser: each study kind's report.html opened in headless Chromium (tests/browser.py,
through its command line: no Python dependency), which takes a screenshot and says that the page rendered,
that every figure of the page is there with a box of its own and every data mark painted, that nothing
overflows the window, and that the page asked for nothing beyond its file (the network log). A control page
with an outside reference and an empty figure shows that the checks catch both.

Skipped when Chromium is not on PATH (`make test` says so; .ci/run installs Debian's `chromium`). With
RANKHOUSE_REPORT_SCREENSHOTS=DIR the screenshots of the kinds docs/studies.md shows (DOCS_SHOTS) are also
copied there as report-<kind>.png: `RANKHOUSE_REPORT_SCREENSHOTS=docs/img pytest tests/test_report_browser.py`
makes the pictures of docs/studies.md ("Reports")."""

from __future__ import annotations

import html as html_text
import os
import re
import shutil
import struct
from pathlib import Path

import pytest
from browser import chromium, render
from conftest import copied
from test_report import SVG

pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium is not on PATH: the browser test is skipped")
WIDTH, HEIGHT = 1280, 1400
DOCS_SHOTS = ("retrieval", "fusion", "lanes")


def problems(page: Path, folder: Path, name: str | None) -> list[str]:
    """What is wrong with a rendered report, as sentences (none: it rendered as it should); the screenshot of
    one of DOCS_SHOTS is kept as report-<name>.png when RANKHOUSE_REPORT_SCREENSHOTS says where."""
    html = page.read_text()
    rendered = render(page, folder, WIDTH, HEIGHT)
    m = rendered.measured
    found = []
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    if m["title"] != html_text.unescape(title):
        found.append(f"title {m['title']!r}")
    if m["sections"] != html.count("<section ") or m["sections"] < 3:
        found.append(f"{m['sections']} sections rendered")
    if m["width"] > m["viewport"]:
        found.append(f"the page is {m['width']} px wide in a {m['viewport']} px window")
    expected = SVG.findall(html)
    if [f["id"] for f in m["figures"]] != expected or not expected:
        found.append(f"figures {[f['id'] for f in m['figures']]}, expected {expected}")
    for f in m["figures"]:
        if not (f["width"] > 100 and f["height"] > 40) or f["left"] < 0 or f["left"] + f["width"] > m["viewport"]:
            found.append(f"figure {f['id']} at {f['left']:.0f} px, {f['width']:.0f} x {f['height']:.0f}")
        if f["painted"] != f["marks"] or not f["title"]:
            found.append(f"figure {f['id']}: {f['painted']} of {f['marks']} marks painted, title {f['title']!r}")
    outside = [url for url in rendered.requests if not url.startswith(("file:", "data:"))]
    if outside:
        found.append(f"requests left the file: {outside}")
    data = rendered.screenshot.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or struct.unpack(">II", data[16:24]) != (WIDTH, HEIGHT) or len(data) < 20_000:
        found.append(f"screenshot of {len(data)} bytes")
    elif name in DOCS_SHOTS and (target := os.environ.get("RANKHOUSE_REPORT_SCREENSHOTS")):
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rendered.screenshot, Path(target) / f"report-{name}.png")
    return found


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
