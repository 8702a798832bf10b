"""`rankhouse models docs DIR`: the static model catalog. Every model has a page; each page's parents and
children are the DAG's (and the `models.x` names of its rendered SQL); the lineage graphs draw exactly
the DAG's edges; every page is well-formed HTML whose links resolve inside the catalog and that refers
to nothing on the network; with a built trec_sample warehouse, each page's row count is count(*) of
its table and its last run is meta.model_runs' latest row, both read here with plain DuckDB."""

from __future__ import annotations

import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from clirunner import rankhouse_in_process

from rankhouse.catalog_docs import write_catalog
from rankhouse.paths import ROOT
from rankhouse.sentences import first_sentence
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.render import render

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
TREC_SAMPLE = ROOT / "studies" / "trec_sample.toml"


class Page(HTMLParser):
    """One page, parsed: nesting errors (every element closed, in order), links, ids, the lineage
    graphs' nodes and edges, and the `data-field` cells of the warehouse section."""

    def __init__(self, path: Path) -> None:
        super().__init__(convert_charrefs=True)
        self.path, self.text = path, path.read_text(encoding="utf-8")
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.values: list[str] = []  # every attribute value
        self.links: list[tuple[str, str]] = []  # (class, href)
        self.ids: set[str] = set()
        self.graphs: list[dict] = []  # per <svg>: its nodes {model: classes} and edges
        self.fields: dict[str, str] = {}
        self.tags: set[str] = set()
        self._field: str | None = None
        self.feed(self.text)
        self.close()
        if self.stack:
            self.errors.append(f"not closed: {self.stack}")

    def _element(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        self.values += list(found.values())
        classes = found.get("class", "").split()
        if "id" in found:
            self.ids.add(found["id"])
        if tag == "svg":
            self.graphs.append({"id": found.get("aria-labelledby"), "nodes": {}, "edges": set()})
        if tag == "a":
            self.links.append((found.get("class", ""), found["href"]))
        if tag == "g" and "node" in classes:
            self.graphs[-1]["nodes"][found["data-model"]] = set(classes)
        if tag == "path" and "edge" in classes:
            self.graphs[-1]["edges"].add((found["data-from"], found["data-to"]))
        if "data-field" in found:
            self._field = found["data-field"]
            self.fields[self._field] = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._element(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self._element(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'} at {self.getpos()}")
            return
        self.stack.pop()
        self._field = None

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.fields[self._field] += data


def pages(folder: Path) -> dict[str, Page]:
    """Every page of a catalog, by its path relative to the catalog."""
    return {p.relative_to(folder).as_posix(): Page(p) for p in sorted(folder.rglob("*.html"))}


def model_pages(catalog: dict[str, Page]) -> dict[str, Page]:
    return {name.removeprefix("models/").removesuffix(".html"): page for name, page in catalog.items()
            if name.startswith("models/")}  # fmt: skip


def written(folder: Path, *args: object) -> dict[str, Page]:
    done = rankhouse_in_process("models", "docs", folder, *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and f"to {folder}" in done.stderr
    return pages(folder)


@pytest.fixture(scope="module")
def project() -> Project:
    return Project.load()


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> tuple[Path, dict[str, Page]]:
    """The whole project's catalog, without a warehouse."""
    folder = tmp_path_factory.mktemp("catalog") / "docs"
    return folder, written(folder)


@pytest.fixture(scope="module")
def trec_sample(tmp_path_factory):
    """The trec_sample study run end to end, and its catalog written from the warehouse."""
    from rankhouse.study import Protocol, Study
    from rankhouse.warehouse import Warehouse

    root = tmp_path_factory.mktemp("trec_sample")
    db = root / "w.duckdb"
    with Warehouse(db) as wh:
        Study(Protocol.load(TREC_SAMPLE), wh, root / "freezes").run()
    folder = root / "docs"
    return db, written(folder, "--db", db, "--study", TREC_SAMPLE)


def test_every_model_has_a_page(catalog, project):
    _, found = catalog
    assert set(model_pages(found)) == set(project.models)
    assert {"index.html", "lineage.html"} <= set(found)
    index = found["index.html"]
    listed = {unquote(href).removeprefix("models/").removesuffix(".html") for _, href in index.links
              if href.startswith("models/")}  # fmt: skip
    assert listed == set(project.models)


def test_a_page_says_how_far_its_model_may_differ_on_spark(catalog, project):
    _, found = catalog
    pages_of = model_pages(found)
    loose = {name for name, model in project.models.items() if model.parity}
    assert loose == {"paired_differences", "bootstrap_replicates"}
    for name in project.models:
        shown = "<th>parity</th>" in pages_of[name].text
        assert shown == (name in loose), name
    assert "within(difference 1e-12, units 100000)" in pages_of["paired_differences"].text


def test_each_pages_parents_and_children_are_the_dags(catalog, project):
    for name, page in model_pages(catalog[1]).items():
        model = project.models[name]
        # independently of the DAG: the models the rendered SQL names, and those the header declares
        named = set(re.findall(r"\bmodels\.(\w+)", render(model, {}))) | {
            d.split(".", 1)[1] for d in model.depends_on if d.startswith("models.")
        }
        assert named == set(project.parents[name]), name
        (graph,) = page.graphs
        parents = {n for n, classes in graph["nodes"].items() if "parent" in classes and "source" not in classes}
        children = {n for n, classes in graph["nodes"].items() if "child" in classes}
        sources = {n for n, classes in graph["nodes"].items() if "source" in classes}
        assert parents == named, name
        assert children == set(project.children[name]) == {c for c, m in project.models.items() if name in
                                                            project.parents[c]}, name  # fmt: skip
        assert sources == {r for r in project.references[name] if not r.startswith("models.")}, name
        assert graph["edges"] == {(p, name) for p in parents | sources} | {(name, c) for c in children}, name
        linked = {kind: {unquote(h).removesuffix(".html") for c, h in page.links if c == kind}
                  for kind in ("parent", "child")}  # fmt: skip
        assert linked == {"parent": parents, "child": children}, name


def test_the_lineage_page_draws_every_edge_of_the_dag(catalog, project):
    page = catalog[1]["lineage.html"]
    edges = {(p, n) for n in project.models for p in project.parents[n]}
    whole = next(g for g in page.graphs if g["id"] == "project-title")
    assert set(whole["nodes"]) == set(project.models) and whole["edges"] == edges
    folders = [g for g in page.graphs if g["id"].startswith("folder-")]
    assert len(folders) == len({m.group for m in project.models.values()})
    for graph in folders:  # each folder's edges are the DAG's edges that touch the folder
        members = {n for n, classes in graph["nodes"].items() if "outside" not in classes}
        assert len({project.models[n].group for n in members}) == 1
        assert graph["edges"] == {(a, b) for a, b in edges if a in members or b in members}


def test_pages_are_well_formed_offline_and_their_links_resolve(catalog):
    folder, found = catalog
    for name, page in found.items():
        assert page.errors == [], name
        assert not re.search(r"https?:|//", " ".join(v for v in page.values if not v.startswith("#"))), name
        assert not re.search(r"https?://", page.text), name
        assert not page.tags & {"script", "link", "img", "iframe", "object", "embed"}, name
        for _, href in page.links:
            target = urlsplit(href)
            assert not target.scheme and not target.netloc, (name, href)
            path = (folder / name).parent / unquote(target.path) if target.path else folder / name
            assert path.resolve().is_file(), (name, href)
            if target.fragment:
                assert target.fragment in found[path.resolve().relative_to(folder.resolve()).as_posix()].ids


def test_the_catalog_is_the_same_bytes_each_time(catalog, project, tmp_path):
    folder, found = catalog
    again = tmp_path / "again"
    write_catalog(project, again)
    assert {p.relative_to(again).as_posix() for p in again.rglob("*.html")} == found.keys()
    assert all((again / name).read_bytes() == (folder / name).read_bytes() for name in found)


def test_a_selection_writes_its_models_and_links_only_to_them(tmp_path, project):
    found = written(tmp_path / "docs", "-s", "+measure_ap")
    assert set(model_pages(found)) == set(project.select("+measure_ap"))
    page = found["models/measure_ap.html"]
    children = {n for n, c in page.graphs[0]["nodes"].items() if "child" in c}
    assert children == set(project.children["measure_ap"]) and "query_measures" in children
    assert not any("child" in c for c, _ in page.links)  # its readers are not selected: named, not linked
    # writing again over it replaces the earlier catalog, pages of unselected models included
    assert set(model_pages(written(tmp_path / "docs", "-s", "measure_rr"))) == {"measure_rr"}


def test_a_warehouse_adds_each_tables_row_count_and_last_run(trec_sample, project):
    db, found = trec_sample
    from warehouse_files import plain

    session = plain(db, "trec_sample", read_only=True)  # the study's namespace (its labels stay closed)
    con = session.__enter__()
    objects = ("SELECT view_name FROM duckdb_views() WHERE database_name = 'trec_sample' AND schema_name = 'models' "
               "AND {} contains(sql, ' FROM store_')")  # fmt: skip
    tables, views = ({r[0] for r in con.execute(objects.format(how)).fetchall()} for how in ("", "NOT"))
    runs = {}
    for model, status, started, fingerprint, seconds in con.execute(
        "SELECT model, status, started_at, fingerprint, seconds FROM meta.model_runs ORDER BY started_at"
    ).fetchall():
        runs[model] = (status, f"{started:%Y-%m-%d %H:%M:%S}", fingerprint, f"{seconds:.2f}")
    pages_ = model_pages(found)
    assert tables and views and tables | views <= set(pages_)
    for name, page in pages_.items():
        fields = page.fields
        if name in tables:
            count = con.execute(f"SELECT count(*) FROM models.{name}").fetchone()[0]
            assert fields["rows"] == f"{count:,}", name
        elif name in views:
            assert fields["rows"].startswith("a view"), name
        else:
            assert fields["rows"] == "no table", name
        if name in runs:
            got = (fields["last_status"], fields["started_at"], fields["fingerprint"], fields["seconds"])
            assert got == runs[name], name
        else:
            assert fields["last_status"] == "never" and fields["status"] == "never built", name
    # the catalog of a study holds its stages' models, with its parameters; its prepare models are built
    # for those parameters, its evaluate models are behind the labels gate (not checked)
    protocol = tomllib.loads(TREC_SAMPLE.read_text())
    mine = Project.load(params=protocol["parameters"])
    prepare, evaluate = (mine.select(protocol["stages"][stage]) for stage in ("prepare", "evaluate"))
    assert set(pages_) == set(prepare) | set(evaluate)
    assert all(pages_[n].fields["status"] == "built" for n in prepare)
    gated = {n for n in evaluate if any(r.startswith("gate.") for m in {n} | mine.ancestors(n) for r in
                                        mine.references[m])}  # fmt: skip
    assert "run_measures" in gated and "rankings" not in gated
    assert all(pages_[n].fields["status"] == "built (labels gated: not checked)" for n in gated)
    assert all(pages_[n].fields["status"] == "built" for n in set(evaluate) - gated)
    session.__exit__(None, None, None)


def test_refusals_come_before_anything_is_written(tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine")
    done = rankhouse_in_process("models", "docs", occupied)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "holds other files" in done.stderr
    assert [p.name for p in occupied.iterdir()] == ["notes.txt"]
    done = rankhouse_in_process("models", "docs", occupied / "notes.txt")
    assert done.returncode == 2 and "is a file" in done.stderr
    fresh = tmp_path / "fresh"
    done = rankhouse_in_process("models", "docs", fresh, "--db", tmp_path / "none.duckdb")
    assert done.returncode == 2 and "no warehouse" in done.stderr and not fresh.exists()
    done = rankhouse_in_process("models", "docs", fresh, "-s", "+no_such_model")
    assert done.returncode == 2 and "no_such_model" in done.stderr and not fresh.exists()


def test_the_index_gives_each_model_its_whole_first_sentence(catalog, project):
    """A summary is the description's first sentence, not cut at an abbreviation's full stop."""
    import html

    folder, _ = catalog
    index = " ".join(html.unescape((folder / "index.html").read_text()).split())
    for name, model in project.models.items():
        summary = first_sentence(model.description)
        assert f"<td>{summary}</td>" in index, (name, summary)
    assert "The class (e.g. intent) of each document" in first_sentence(project.models["document_classes"].description)
