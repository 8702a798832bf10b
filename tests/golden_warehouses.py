"""Warehouses built from the golden fixtures (tests/golden/<fixture>/, tests/measures/test_snapshots.py): a
fixture's input files loaded and its models built by `rankhouse test`'s own code (model_tests.build_fixture),
for the tests that start from a small study's built models."""

from __future__ import annotations

from conftest import GOLDEN

from rankhouse.model_tests import build_fixture, read_fixture
from rankhouse.warehouse import Warehouse


def build_golden(wh: Warehouse, fixture: str) -> None:
    """tests/golden/<fixture>'s inputs loaded into `wh` and every model it tests built (the gate open)."""
    build_fixture(wh, read_fixture(GOLDEN / fixture))
