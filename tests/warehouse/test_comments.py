"""Table and column comments of built models: the header's description on each table and view, each
column's definition from the glossary (models/columns.toml) or the header's `columns`; the glossary's
names are real columns; a header cannot redefine one; comments change no fingerprint."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest
from conftest import GOLDEN
from warehouse_files import plain

from rankhouse.errors import ModelError
from rankhouse.paths import MODELS_DIR
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.catalog import load_models
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

GLOSSARY = tomllib.loads((MODELS_DIR / "columns.toml").read_text())


def header(path: Path) -> dict[str, str]:
    """A model file's header keys, continuation lines joined with a space (read here, not by the catalog)."""
    found: dict[str, str] = {}
    key = None
    for line in path.read_text().splitlines():
        if match := re.match(r"^--   +(\S.*)$", line):
            found[key] += " " + match.group(1).strip()
        elif match := re.match(r"^-- (\w+):\s*(.*)$", line):
            key = match.group(1)
            found[key] = match.group(2).strip()
        else:
            break
    return found


HEADERS = {path.stem: header(path) for path in MODELS_DIR.rglob("*.sql")}
OWN = {name: tomllib.loads(f"c = {{{h['columns']}}}")["c"] for name, h in HEADERS.items() if "columns" in h}
GOLDEN_COLUMNS = {path.stem: path.read_text().splitlines()[0].split(",") for path in GOLDEN.glob("*/*.csv")}


def test_built_tables_views_and_columns_carry_the_headers_and_the_glossary(trec_sample_study):
    """Every model object of the study's namespace (prepare models) and of its labels file (evaluate models)."""
    with plain(trec_sample_study.db, "trec_sample", read_only=True, labels=True) as con:
        relations = con.execute(
            "SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'models' "
            "UNION ALL SELECT view_name, comment FROM duckdb_views() WHERE schema_name = 'models'"
        ).fetchall()
        columns = con.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE schema_name = 'models'"
        ).fetchall()
    assert len(relations) > 20
    for name, comment in relations:
        assert comment == HEADERS[name]["description"], name
    commented = 0
    for name, column, comment in columns:
        expected = OWN.get(name, {}).get(column) or GLOSSARY.get(column)
        assert comment == expected, (name, column)
        commented += comment is not None
    assert commented > 100
    assert ("run_measures", "measure", GLOSSARY["measure"]) in columns


def test_every_glossary_name_is_a_column_and_every_header_column_is_its_models():
    every = {column for names in GOLDEN_COLUMNS.values() for column in names}  # a golden file per model
    assert set(GLOSSARY) - every == set()
    for name, own in OWN.items():
        assert set(own) - set(GOLDEN_COLUMNS[name]) == set(), name
    assert OWN and load_models(MODELS_DIR)["fusion_candidates"].columns == OWN["fusion_candidates"]


def test_a_header_cannot_redefine_a_glossary_name(tmp_path):
    (tmp_path / "columns.toml").write_text('qid = "the query id"\n')
    (tmp_path / "x.sql").write_text(
        "-- name: x\n-- version: 1\n-- stage: prepare\n-- grain: qid\n-- audits:\n-- description: X.\n"
        '-- columns: qid = "mine", extra = "its own"\nSELECT 1 AS qid, 2 AS extra\n'
    )
    with pytest.raises(ModelError, match="columns: qid is defined in models/columns.toml"):
        load_models(tmp_path)
    (tmp_path / "x.sql").write_text((tmp_path / "x.sql").read_text().replace('qid = "mine", ', ""))
    model = load_models(tmp_path)["x"]
    assert (model.column_comment("qid"), model.column_comment("extra"), model.column_comment("y")) == (
        "the query id", "its own", None,
    )  # fmt: skip


def test_comments_change_no_fingerprint(tmp_path):
    """The same models with other descriptions and column definitions have the same fingerprints."""
    models = tmp_path / "models"
    shutil.copytree(MODELS_DIR, models)
    for path in (models / "staging" / "run_ranking.sql", models / "fusion" / "fusion_candidates.sql"):
        path.write_text(path.read_text().replace("-- description:", "-- description: Reworded.", 1))
    (models / "columns.toml").write_text('qid = "another definition"\n')
    text = (models / "fusion" / "fusion_candidates.sql").read_text()
    (models / "fusion" / "fusion_candidates.sql").write_text(re.sub(r"(?m)^-- columns:.*\n(--   .*\n)*", "", text))
    with Warehouse(":memory:") as wh:
        before, after = Runner(wh, Project.load()), Runner(wh, Project.load(models))
        for name in ("run_ranking", "fusion_candidates", "fused_rankings"):
            assert before.fingerprint(name) == after.fingerprint(name)
        assert after.project.models["run_ranking"].description.startswith("Reworded.")
