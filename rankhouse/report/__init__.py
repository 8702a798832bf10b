"""`rankhouse report DIR`: a study's report, drawn from its output directory alone.

DIR/report.html is one self-contained page (inline CSS and SVG, no script, no network: its
Content-Security-Policy forbids loading anything); the Markdown variant DIR/report.md has the same
tables and links the same figures, written as DIR/figures/<id>.svg, for papers and pull requests. A
study whose writer writes its own report.md (a report kind with `own_markdown`: the named-features
study) keeps it: the figures, the freeze chain and the provenance are written into it, between two marker
lines that a new run replaces, so that each study has one Markdown report. What the sections hold and
where each number comes from: rankhouse/report/sections.py; the figures: rankhouse/report/plots.py.
Everything is read and rendered before the first file is written, and the same directory gives the same
bytes.

    >>> FORMATS
    ('html', 'md', 'both')
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from rankhouse.report.sections import Report, Section, read

FORMATS = ("html", "md", "both")
BEGIN = "<!-- rankhouse report: begin (written by `rankhouse report DIR`; replaced on every run) -->"
END = "<!-- rankhouse report: end -->"


def _environment(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rankhouse.report", "templates"),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["cell"] = markdown_cell
    return env


def markdown_cell(value: object) -> str:
    """Text made safe for one Markdown table cell or line: pipes escaped, line breaks as spaces.

    >>> print(markdown_cell("a | b  c"))
    a \\| b c
    """
    return " ".join(str(value).split()).replace("|", "\\|")


def html(report: Report) -> str:
    """report.html's text.  Example: html(read(Path("out/banking77")))"""
    return _environment(True).get_template("report.html.j2").render(report=report)


def markdown(report: Report, appended: bool = False) -> str:
    """The Markdown report's text; `appended`: only the block that goes into a writer's own report.md (the
    figures with their notes, the freeze chain and the provenance, headings one level down).

    Example: markdown(read(Path("out/banking77")))
    """
    sections = report.sections
    if appended:
        sections = [
            Section(s.ident, s.title, [b for b in s.blocks if b.kind in ("text", "figure", "figures")])
            if s.ident in report.spec.figure_only else s
            for s in sections
        ]  # fmt: skip
        sections = [s for s in sections if any(b.kind in ("figure", "figures", "table", "code") for b in s.blocks)]
    text = _environment(False).get_template("report.md.j2").render(report=report, sections=sections, appended=appended)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip("\n") + "\n"


def _with_block(existing: str, block: str) -> str:
    """A writer's report.md with the report's block (after its own text, replacing an earlier block)."""
    if BEGIN in existing:
        head, _, rest = existing.partition(BEGIN)
        _, _, tail = rest.partition(END)
        existing = head.rstrip("\n") + "\n" + tail.lstrip("\n")
    return existing.rstrip("\n") + "\n\n" + BEGIN + "\n\n## Figures, freeze chain and provenance\n\n" + block + "\n" \
        + END + "\n"  # fmt: skip


def build(directory: Path | str, output_format: str = "both") -> list[Path]:
    """Write DIR/report.html and/or the Markdown report with DIR/figures/*.svg; return the files written.

    Example: build("out/banking77", "html")
    """
    directory = Path(directory)
    report = read(directory)
    files: dict[Path, str] = {}
    if output_format in ("html", "both"):
        files[directory / "report.html"] = html(report)
    if output_format in ("md", "both"):
        target = directory / "report.md"
        if report.spec.own_markdown and target.is_file():
            files[target] = _with_block(target.read_text(encoding="utf-8"), markdown(report, appended=True))
        else:
            files[target] = markdown(report)
        for figure in report.figures():
            files[directory / "figures" / f"{figure.ident}.svg"] = figure.svg + "\n"
    written = []
    if output_format in ("md", "both"):
        (directory / "figures").mkdir(exist_ok=True)
        for stale in sorted((directory / "figures").glob("*.svg")):
            if stale not in files:
                stale.unlink()
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
