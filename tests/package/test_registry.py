"""The registry of study parts (rankhouse/registry.py): filled by the core and every study package on first
use, a name registered twice refused naming both registrations, a study's tables checked against the core's
and the other studies', and the old mappings (LOADERS, GENERATORS, FUNCTIONS, WRITERS) reading from it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clirunner import rankhouse

from rankhouse import registry
from rankhouse.errors import RankhouseError
from rankhouse.functions import FUNCTIONS
from rankhouse.generators import GENERATORS
from rankhouse.loaders import LOADERS, load_run
from rankhouse.registry import Loader, Tables, Writer, register
from rankhouse.study.outputs import WRITERS


def test_the_core_and_every_study_package_register_their_parts():
    assert LOADERS["trec.run"].load is load_run
    assert registry.origin_of(LOADERS["trec.run"]) == "rankhouse.registry (the core)"
    assert registry.origin_of(LOADERS["lanes.narratives"]) == "rankhouse.studies.lanes"
    assert registry.origin_of(GENERATORS["evidence_plan"]) == "rankhouse.studies.evidence"
    assert registry.origin_of(FUNCTIONS["semantic_chunks"]) == "rankhouse.studies.lanes"
    assert sorted(WRITERS) == ["evidence", "features", "fusion", "lanes", "retrieval", "trec"]
    assert WRITERS["trec"] == "rankhouse.study.trec"


def test_a_name_registered_twice_is_an_error_naming_both():
    register(Loader("test.twice", "tests.nowhere:load", False, ()), origin="the first package")
    try:
        with pytest.raises(RankhouseError, match="loader 'test.twice' is registered twice: by the first package and "
                                                 "by the second package"):  # fmt: skip
            register(Loader("test.twice", "tests.elsewhere:load", True, ()), origin="the second package")
        with pytest.raises(RankhouseError, match="loader 'trec.run' is registered twice: by rankhouse.registry"):
            register(Loader("trec.run", "tests.elsewhere:load", False, ()), origin="a study")
        assert LOADERS["test.twice"].target == "tests.nowhere:load"
    finally:
        del LOADERS["test.twice"]
    assert "test.twice" not in LOADERS


def test_a_studys_tables_may_not_take_a_name_the_core_or_another_study_declares(tmp_path):
    mine = tmp_path / "inputs.sql"
    mine.write_text("CREATE TABLE IF NOT EXISTS raw.documents (x INTEGER);\n")
    with pytest.raises(RankhouseError, match=r"table raw.documents is declared twice: by sql/warehouse.sql and by "
                                             r"study mine"):  # fmt: skip
        register(Tables("mine", inputs=mine), origin="test")
    mine.write_text("CREATE TABLE IF NOT EXISTS raw.lane_units (x INTEGER);\n")
    with pytest.raises(RankhouseError, match=r"raw.lane_units is declared twice: by study lanes"):
        register(Tables("mine", inputs=mine), origin="test")
    mine.write_text("CREATE TABLE IF NOT EXISTS models.mine (x INTEGER);\n")
    with pytest.raises(RankhouseError, match=r"table models.mine of study mine is not raw.<name> or meta.<name>"):
        register(Tables("mine", inputs=mine), origin="test")
    labels = tmp_path / "labels.sql"
    labels.write_text("CREATE TABLE IF NOT EXISTS raw.my_labels (x INTEGER);\n")
    with pytest.raises(RankhouseError, match=r"table raw.my_labels of study mine is not an unqualified name"):
        register(Tables("mine", labels=labels), origin="test")
    assert "mine" not in registry.entries(Tables)


def test_assigning_through_an_old_mapping_replaces_and_restores():
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(WRITERS, "trec", "tests.my_writer")
        assert registry.entries(Writer)["trec"] == Writer("trec", "tests.my_writer")
    assert WRITERS["trec"] == "rankhouse.study.trec"


def test_a_study_that_fails_on_import_is_named(tmp_path):
    """An installed study (an entry point of the group rankhouse.studies) whose package raises on import: the
    command line says which study and why, in one line."""
    site = tmp_path / "site"
    (site / "broken_study").mkdir(parents=True)
    (site / "broken_study" / "__init__.py").write_text("raise ValueError('no such table')\n")
    dist = site / "broken_study-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-study\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rankhouse.studies]\nbroken = broken_study\n")
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    done = rankhouse("models", "list", cwd=tmp_path, env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: study entry point broken = 'broken_study' (distribution broken-study 0.1) failed on import: "
        "ValueError: no such table"
    ]
    assert Path(tmp_path).is_dir()
