"""A report.html read back (tests/report/, and the studies' report tests): its figures (each an inline SVG with
an id) parsed, and the data attributes of each figure's marks."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG = re.compile(r'<svg xmlns="http://www.w3.org/2000/svg" id="([^"]+)" class="figure".*?</svg>', re.S)


def figures(html: str) -> dict[str, ET.Element]:
    """Every figure of a report.html, parsed, by id."""
    return {match.group(1): ET.fromstring(match.group(0)) for match in SVG.finditer(html)}


def marks(svg: ET.Element) -> list[dict]:
    """The data attributes of a figure's marks (every element with class "mark")."""
    return [
        {k.removeprefix("data-"): v for k, v in e.attrib.items() if k.startswith("data-")}
        for e in svg.iter()
        if e.get("class") == "mark"
    ]
