"""The Markdown docs (README.md and docs/*.md) against the checkout: every relative link leads to a file (and
an anchor to a heading of it); every `rankhouse ...` command of a code block is a command of the CLI; every
study page names its protocol, and each model its protocol's stages select by name, and holds its own
results; the README stays a front door (short, linking every page, every study's results among them); the
architecture page's tree and formula table name files that exist, its tree every folder, module and SQL file, and
its hop counts from the README are true."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

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


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def section(text: str, heading: str) -> str:
    """A page's section: from its `## heading` to the next `## `."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The cells of a section's table, its header and separator left out."""
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]


def link_target(page: Path, target: str) -> Path | None:
    """The file a relative link of a page leads to (None for a URL)."""
    if re.match(r"[a-z]+:", target):
        return None
    path = target.partition("#")[0]
    return (page.parent / path).resolve() if path else page.resolve()


def tree_paths() -> list[str]:
    """The paths the architecture page's tree names, one line each: a name, indented two spaces below its folder."""
    block = section(ARCHITECTURE.read_text(encoding="utf-8"), "The repository").split("```")[1]
    paths, folders = [], []  # folders: (indent, path) of the folders still open
    for line in filter(str.strip, block.splitlines()):
        indent, name = len(line) - len(line.lstrip(" ")), line.split()[0]
        assert indent % 2 == 0, line
        folders = [(depth, path) for depth, path in folders if depth < indent]
        paths.append((folders[-1][1] if folders else "") + name)
        if name.endswith("/"):
            folders.append((indent, paths[-1]))
    return paths


def test_every_path_of_the_architecture_tree_exists():
    for path in tree_paths():
        assert (ROOT / path).is_dir() if path.endswith("/") else (ROOT / path).is_file(), path


def test_the_architecture_tree_names_every_folder_module_and_sql_file():
    named = set(tree_paths())
    folders = [path for top in ("rankhouse", "models") for path in (ROOT / top).rglob("*") if path.is_dir()]
    files = [*(ROOT / "rankhouse").rglob("*.py"), *(ROOT / "sql").rglob("*.sql")]
    for path in [*folders, *files]:
        parts = path.relative_to(ROOT).parts
        if any(part.startswith((".", "__pycache__")) for part in parts) or path.name == "__init__.py":
            continue  # a package's __init__.py is its folder's line
        relative = "/".join(parts) + ("/" if path.is_dir() else "")
        assert relative in named, f"docs/architecture.md's tree does not name {relative}"


def test_every_formula_links_the_file_it_is_written_in():
    rows = table_rows(section(ARCHITECTURE.read_text(encoding="utf-8"), "Where each formula is written"))
    assert len(rows) > 20
    for formula, where in rows:
        assert LINK.findall(where), f"{formula}: no link"
        for path in re.findall(r"`((?:rankhouse|models|sql)/[^`<>* ]*)`", where):
            assert (ROOT / path).exists(), f"{formula}: {path}"


def hops_from_the_readme() -> dict[Path, int]:
    """Every file the README leads to, with the fewest clicks it takes (breadth first over the Markdown pages)."""
    readme = (ROOT / "README.md").resolve()
    hops, frontier = {readme: 0}, [readme]
    while frontier:
        page = frontier.pop(0)
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            found = link_target(page, target)
            if found is not None and found not in hops:
                hops[found] = hops[page] + 1
                if found.suffix == ".md":
                    frontier.append(found)
    return hops


def test_the_hops_from_the_readme_are_true():
    """Each row's click path is a chain of links from the README, as long as it says and no longer than needed."""
    hops = hops_from_the_readme()
    rows = table_rows(section(ARCHITECTURE.read_text(encoding="utf-8"), "Hops from the README"))
    assert {"nDCG", "Wilson interval", "paired bootstrap", "BM25", "the greedy selection"} <= {row[0] for row in rows}
    for what, path, count in rows:
        chain = [link_target(ARCHITECTURE, target) for target in LINK.findall(path)]
        assert chain[0] == (ROOT / "README.md").resolve(), what
        for page, following in zip(chain, chain[1:]):
            links = {link_target(page, target) for target in LINK.findall(page.read_text(encoding="utf-8"))}
            assert following in links, f"{what}: {page.name} does not link {following.name}"
        assert int(count) == len(chain) - 1 == hops[chain[-1]], what
