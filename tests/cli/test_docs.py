"""The Markdown docs (README.md and docs/*.md) against the checkout: every relative link leads to a file (and
an anchor to a heading of it); every `rankhouse ...` command of a code block is a command of the CLI; every
study page names its protocol, and each model its protocol's stages select by name, and holds its own
results; the README stays a front door (short, linking every page, every study's results among them)."""

from __future__ import annotations

import re
import tomllib

import pytest
from clirunner import COMMANDS

from rankhouse.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
STUDY_PAGES = {  # page -> the protocols it documents
    "trec_sample.md": ["trec_sample"],
    "banking77.md": ["banking77"],
    "features.md": ["banking77_features"],
    "fusion.md": ["fusion_scifact", "fusion_banking77"],
    "lanes.md": ["lanes_banking77"],
    "evidence.md": ["evidence_demo"],
}
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE_BLOCK = re.compile(r"^```(?:sh|console)?\n(.*?)^```", re.MULTILINE | re.DOTALL)


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation but - and _ dropped, spaces to -."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        found.add(re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_and_heading(page):
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a URL: not checked offline
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: {target}"
        if anchor:
            assert anchor in anchors(resolved.read_text(encoding="utf-8")), f"{page.name}: {target}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_in_a_code_block_exists(page):
    commands = {" ".join(path) for path, _ in COMMANDS}
    for block in CODE_BLOCK.findall(page.read_text(encoding="utf-8")):
        for line in block.splitlines():
            words = line.split("#")[0].split()
            if not words or words[0] != "rankhouse" or len(words) < 2 or words[1].startswith("-"):
                continue
            two = " ".join(words[1:3])
            assert words[1] in commands or two in commands, f"{page.name}: {line}"


@pytest.mark.parametrize("page", sorted(STUDY_PAGES), ids=str)
def test_a_study_page_names_its_protocol_and_its_stages_models(page):
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    for study in STUDY_PAGES[page]:
        assert f"studies/{study}.toml" in text, study
        stages = tomllib.loads((ROOT / "studies" / f"{study}.toml").read_text())["stages"]
        for selection in stages.values():
            for item in selection.split():
                assert f"`{item.strip('+')}`" in text, f"{page}: {item}"


def test_the_spark_page_lists_every_model_that_cannot_match_on_spark():
    from rankhouse.warehouse.dag import Project

    text = (ROOT / "docs" / "spark.md").read_text()
    table = text[text.index("| model | columns, within | why |") :].split("\n\n", 1)[0]
    listed = {line.split("|")[1].strip() for line in table.splitlines()[2:]}
    exempt = {name for name, model in Project.load().models.items() if model.tolerances}
    assert listed == exempt == {"paired_differences", "bootstrap_replicates"}
    for name in listed:  # each column the header names is in its row
        row = next(line for line in table.splitlines() if line.startswith(f"| {name} |"))
        assert all(column in row for column in Project.load().models[name].tolerances)


README_LINES = 250  # the README is a front door: what it is, install, a tour, the studies; the rest is in docs/


def test_the_readme_is_a_front_door_that_links_every_page_and_every_studys_results():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_LINES
    links = set(LINK.findall(text))
    targets = {link.partition("#")[0] for link in links}
    pages = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    assert {"docs/performance.md", "docs/spark.md"} <= targets
    assert pages - targets == set(), "docs pages the README does not link"
    for page in STUDY_PAGES:  # each study's row links its page's results
        assert f"docs/{page}#results-as-they-came-out" in links, page
    assert "make demo" in text and "make test" in text


@pytest.mark.parametrize("page", sorted(STUDY_PAGES), ids=str)
def test_a_study_page_holds_its_results_and_does_not_send_the_reader_to_the_readme(page):
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert "results-as-they-came-out" in anchors(text), page
    assert "README" not in text, page


def test_the_bench_tables_are_on_the_performance_page_and_not_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    performance = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    found = set(re.findall(r"<!-- bench/(\w+\.py): begin -->", performance))
    assert found == {"eval_speed.py", "fusion_speed.py", "banking77_speed.py", "demo_speed.py", "spark_scale.py"}
    assert "<!-- bench/" not in readme
    assert "[docs/performance.md](docs/performance.md)" in readme[readme.index("## Speed") :]
