"""Headless Chromium for the report's tests (tests/report/test_report_browser.py), through its command line
only.

`render(page, folder)` opens a copy of an HTML page with a tiny measuring script added (and the page's
Content-Security-Policy left out, so that a reference the page makes would be requested, not blocked) in
one Chromium run that takes a screenshot, dumps the DOM after the script ran and logs the network
(--log-net-log). It returns what the script measured (every figure's rendered box and its painted marks)
and every URL the page itself asked for: the net log's URL_REQUEST_START_JOB events whose initiator is
the page (Chromium's own background requests, its update and time checks, have no origin and are not
the page's). File loads are not network requests, so a self-contained page asks for nothing.
`problems(page, folder, name)` renders a report.html and says what is wrong with it (the report tests,
and the features study's).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from report_pages import SVG

# Runs after the page has loaded (it is the body's last element): every figure's box, and how many of its
# marks (the .mark elements each plot draws a data point with) have a box of their own.
MEASURE = """<script>
(function () {
  var figures = Array.prototype.map.call(document.querySelectorAll("svg.figure"), function (svg) {
    var box = svg.getBoundingClientRect();
    var marks = svg.querySelectorAll(".mark");
    var painted = Array.prototype.filter.call(marks, function (m) {
      var b = m.getBoundingClientRect();
      return b.width > 0 || b.height > 0;
    }).length;
    return {id: svg.id, width: box.width, height: box.height, left: box.left, marks: marks.length,
            painted: painted, title: (svg.querySelector("title") || {}).textContent || ""};
  });
  var out = document.createElement("pre");
  out.id = "rankhouse-measured";
  out.style.display = "none";
  out.textContent = JSON.stringify({title: document.title, figures: figures,
    sections: document.querySelectorAll("main section").length,
    width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
    viewport: window.innerWidth});
  document.body.appendChild(out);
})();
</script>"""
CSP = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')


def chromium() -> str | None:
    """The Chromium on PATH (Debian's package installs /usr/bin/chromium), or None."""
    return next((found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None)


@dataclass
class Rendered:
    measured: dict  # what MEASURE wrote: title, figures, sections, width, height, viewport
    requests: list[str]  # every URL the page asked for
    screenshot: Path


def page_requests(net_log: Path) -> list[str]:
    """The URLs a page asked for, from a Chromium net log: URL requests with an initiator (the page's
    origin; a file page's is "null"), not the browser's own ("not an origin")."""
    log = json.loads(net_log.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        e["params"]["url"]
        for e in log["events"]
        if e["type"] == start and "url" in e.get("params", {}) and e["params"].get("initiator") != "not an origin"
    ]


def render(page: Path, folder: Path, width: int = 1280, height: int = 1400) -> Rendered:
    """Open a measuring copy of `page` (written beside it, so that relative references resolve as they
    would) in headless Chromium; screenshot, measurements and network log go to `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    text = page.read_text(encoding="utf-8")
    copy = page.with_name(f".measured-{page.name}")
    copy.write_text(CSP.sub("", text).replace("</body>", MEASURE + "\n</body>"), encoding="utf-8")
    screenshot, net_log = folder / f"{page.stem}.png", folder / f"{page.stem}.netlog.json"
    command = [
        chromium() or "chromium", "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
        f"--user-data-dir={folder / 'profile'}", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
        f"--window-size={width},{height}", f"--screenshot={screenshot}", f"--log-net-log={net_log}",
        "--dump-dom", copy.resolve().as_uri(),
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(2, "--no-sandbox")  # Chromium's sandbox refuses to run as root (CI containers)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    finally:
        copy.unlink()
    found = re.search(r'<pre id="rankhouse-measured"[^>]*>(.*?)</pre>', done.stdout, re.S)
    if done.returncode != 0 or not found:
        raise AssertionError(f"chromium exited {done.returncode} without the measurements:\n{done.stderr[-2000:]}")
    measured = json.loads(html.unescape(found.group(1)))
    return Rendered(measured, page_requests(net_log), screenshot)


WIDTH, HEIGHT = 1280, 1400  # the window of the report tests (tests/report/test_report_browser.py)
DOCS_SHOTS = ("retrieval", "fusion", "lanes")  # the kinds whose screenshots docs/studies.md shows


def problems(page: Path, folder: Path, name: str | None) -> list[str]:
    """What is wrong with a rendered report, as sentences (none: it rendered as it should); the screenshot of
    one of DOCS_SHOTS is kept as report-<name>.png when RANKHOUSE_REPORT_SCREENSHOTS says where."""
    source = page.read_text()
    rendered = render(page, folder, WIDTH, HEIGHT)
    m = rendered.measured
    found = []
    title = re.search(r"<title>(.*?)</title>", source, re.S).group(1)
    if m["title"] != html.unescape(title):
        found.append(f"title {m['title']!r}")
    if m["sections"] != source.count("<section ") or m["sections"] < 3:
        found.append(f"{m['sections']} sections rendered")
    if m["width"] > m["viewport"]:
        found.append(f"the page is {m['width']} px wide in a {m['viewport']} px window")
    expected = SVG.findall(source)
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
