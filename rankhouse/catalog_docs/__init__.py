"""`rankhouse models docs DIR`: a static catalog of the models, like dbt docs, in plain HTML (no network,
no JavaScript needed to read it).

DIR/index.html lists the models by folder with their stage, version, materialization, grain and what
each holds; DIR/lineage.html draws the whole project's DAG; DIR/models/<name>.html is one page per model:
its header, description, lineage (its parents and children as an SVG, linked to their pages), audits
(with the query each runs), its SQL as rendered and as written, and, from a warehouse (`--db`), its
status there (built, out of date, never built), its last run (status, time, fingerprint, seconds) and
its row count. The pages are rendered with jinja2 from rankhouse/catalog_docs/templates/ (package
data: the wheel carries them). Everything is read from the model files and the warehouse; nothing is
fetched.

    >>> write_catalog(Project.load(), Path("out/catalog"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import jinja2

from rankhouse.errors import RankhouseError
from rankhouse.project import shown_path
from rankhouse.sentences import first_sentence
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.audits import audit_sql
from rankhouse.warehouse.catalog import Audit, Model
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.render import effective_parameters, render

from .lineage import folder_graph, group_fills, group_order, neighbourhood, project_graph, sources_of

TEMPLATES = Path(__file__).parent / "templates"
GENERATOR = "rankhouse models docs"  # index.html's <meta name="generator">: marks a folder as a catalog
LAYERS = {
    "staging": "the only models that read loaded inputs (raw.*) and labels (gate.*); the rankings and "
    "judgments shapes every measure reads",
    "metrics": "one model per measure family, in one long form (study, system, query, measure, value)",
    "stats": "intervals, macro averages, paired differences, the paired bootstrap and tests",
}
AUDITS = {
    "not_null": "no NULL in these columns",
    "unique_grain": "one row per value of the grain",
    "accepted_range": "every value of the column within [low, high] (an empty bound is open), and finite",
    "at_least_one_row": "the model is not empty",
}


@dataclass(frozen=True)
class ModelState:
    """A model in a warehouse: its status for the current parameters, its last run and its rows now."""

    status: str  # built, out of date, never built (or why it could not be checked)
    last_status: str | None  # the last run's: built, skipped or failed
    started_at: datetime | None
    fingerprint: str | None  # the last run's
    seconds: float | None
    message: str | None  # a failed run's error
    exists: bool  # a table or view of that name is in models.*
    rows: int | None  # count(*) of its table; None for a view (counting would run it) or a missing table


def summary(description: str) -> str:
    """A description's first sentence.

    >>> summary("P@k (trec_eval P.k): relevant among the first k. P(rel=g)@k counts ...")
    'P@k (trec_eval P.k): relevant among the first k'
    """
    return first_sentence(description)


def warehouse_states(wh: Warehouse, project: Project, names: list[str], statuses: dict[str, str]) -> dict:
    """Per model of `names`: its ModelState in `wh`, given each one's status (cli/models.py `_statuses`).

    >>> warehouse_states(wh, project, ["measure_ap"], {"measure_ap": "built"})["measure_ap"].rows  # doctest: +SKIP
    6
    """
    last = {
        row[0]: row[1:]
        for row in wh.sql(
            "SELECT model, status, started_at, fingerprint, seconds, message FROM meta.model_runs "
            "QUALIFY row_number() OVER (PARTITION BY model ORDER BY started_at DESC, rowid DESC) = 1"
        )
    }
    catalogs = [wh.namespace] + (["gate"] if "gate" in wh.attached() else [])
    objects = dict(
        wh.sql(
            "SELECT table_name, 'table' FROM duckdb_tables() WHERE list_contains(?, database_name) "
            "AND schema_name = 'models' UNION ALL SELECT view_name, CASE WHEN contains(sql, ' FROM store_') "
            "THEN 'table' ELSE 'view' END FROM duckdb_views() WHERE list_contains(?, database_name) "
            "AND schema_name = 'models'",  # a table model's view over its store table: its table
            [catalogs, catalogs],
        )
    )
    states = {}
    for name in names:
        kind = objects.get(name)
        rows = wh.sql(f"SELECT count(*) FROM models.{name}")[0][0] if kind == "table" else None
        status, started, fingerprint, seconds, message = last.get(name, (None,) * 5)
        states[name] = ModelState(
            statuses[name], status, started, fingerprint, seconds, message, kind is not None, rows
        )
    return states


def check_directory(out: Path) -> None:
    """Refuse, before anything is written, a DIR that is a file or a folder holding anything but an
    earlier catalog (which is replaced)."""
    if out.exists() and not out.is_dir():
        raise RankhouseError(f"{out} is a file; give a folder for the catalog")
    if out.is_dir() and any(out.iterdir()) and not is_catalog(out):
        raise RankhouseError(
            f"{out} holds other files: give a new or empty folder, or one an earlier `rankhouse models docs` wrote"
        )


def is_catalog(out: Path) -> bool:
    """Whether `out` holds a catalog this command wrote (its index.html names the generator)."""
    index = out / "index.html"
    return index.is_file() and f'<meta name="generator" content="{GENERATOR}">' in index.read_text(errors="replace")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["summary"] = summary
    env.filters["number"] = lambda value: f"{value:,}"
    env.filters["slug"] = lambda status: status.split(" (")[0].replace(" ", "-")
    return env


def _audit(model: Model, audit: Audit) -> dict:
    return {"text": str(audit), "meaning": AUDITS[audit.kind], "sql": audit_sql(model, audit)}


def _toml(value: object) -> str:
    """A parameter value as a protocol writes it: `true`, `"banking77"`, `["AP", "P@10"]`."""
    return json.dumps(value, ensure_ascii=False)


def _parameters(model: Model, params: dict) -> list[dict]:
    """The model's parameters: each one's default and, where it differs, the value used here."""
    used = effective_parameters(model, params)
    return [
        {"name": key, "default": _toml(default), "used": None if used[key] == default else _toml(used[key])}
        for key, default in model.parameters.items()
    ]


def model_page(project: Project, name: str, href: dict[str, str]) -> dict:
    """What a model's page shows (the template's `model`), links relative to the page itself."""
    model = project.models[name]
    link = {n: f"{quote(n)}.html" for n in href}
    return {
        "name": name,
        "group": model.group,
        "stage": model.stage,
        "version": model.version,
        "file": shown_path(model.path),
        "grain": ", ".join(model.grain),
        "materialized": model.materialized,
        "aggregate": model.aggregate,
        "functions": ", ".join(model.functions),
        "dialect": model.dialect,
        "parity": model.parity,
        "depends_on": ", ".join(model.depends_on),
        "description": model.description,
        "parameters": _parameters(model, project.params),
        "audits": [_audit(model, a) for a in model.audits],
        "parents": [{"name": p, "href": link.get(p)} for p in project.parents[name]],
        "sources": sources_of(project, name),
        "children": [{"name": c, "href": link.get(c)} for c in project.children[name]],
        "lineage": neighbourhood(project, name, link.get),
        "rendered": render(model, project.params).strip(),
        "template": model.template.strip(),
    }


def write_catalog(
    project: Project,
    out: Path,
    names: list[str] | None = None,
    states: dict[str, ModelState] | None = None,
    source: str = "the model files",
) -> list[Path]:
    """Write the catalog of `names` (all models by default, in dependency order) into `out`: index.html,
    lineage.html and models/<name>.html; `states` (warehouse_states) adds each model's status, last run
    and rows. An earlier catalog in `out` is replaced. Returns the files written.

    >>> write_catalog(Project.load(), Path("out/catalog"), ["measure_ap"])  # doctest: +SKIP
    """
    check_directory(out)
    names = list(project.order) if names is None else names
    env = _environment()
    pages = out / "models"
    if pages.is_dir():
        shutil.rmtree(pages)  # an earlier catalog's pages: some of its models may be gone or unselected
    pages.mkdir(parents=True)
    href = {n: f"models/{quote(n)}.html" for n in names}
    common = {"source": source, "states": states or {}, "warehouse": states is not None}
    written = []
    for name in names:
        html = env.get_template("model.html").render(**common, root="../", model=model_page(project, name, href))
        written.append(_write(pages / f"{name}.html", html))
    fills = group_fills(project)
    groups = [
        {
            "name": group,
            "layer": LAYERS.get(group, "a study's own models"),
            "fill": fills[group],
            "models": [project.models[n] for n in names if project.models[n].group == group],
        }
        for group in group_order({project.models[n].group for n in names})
    ]
    readers: dict[str, list[str]] = {}
    for name in names:
        for table in sources_of(project, name):
            readers.setdefault(table, []).append(name)
    index = env.get_template("index.html").render(
        **common, root="", groups=groups, href=href, total=len(names), all_models=len(project.models),
        stages={s: sum(project.models[n].stage == s for n in names) for s in ("prepare", "evaluate")},
        sources=sorted(readers.items()),
    )  # fmt: skip
    written.append(_write(out / "index.html", index))
    for group in groups:
        group["graph"] = folder_graph(project, group["name"], names, href.get)
    graph = project_graph(project, names, href.get)
    lineage = env.get_template("lineage.html").render(**common, root="", graph=graph, groups=groups)
    written.append(_write(out / "lineage.html", lineage))
    return written


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
