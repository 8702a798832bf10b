"""The core knows no study (issues 12 and 35): the warehouse, the study runner, the shared loaders, the
report framework, the CLI and the registries import no study's module, statically or when a warehouse is
opened and models run; studies plug in through rankhouse/registry.py, their packages naming their code as
text. Opening a warehouse reads the registry (the studies' own tables are part of its DDL), which imports
each study package's registration and nothing else of it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES

from rankhouse.paths import PACKAGE

# The modules of studies: their packages (loaders, generators, writers, report sections, commands), and the
# Python steps still outside them.
STUDY_MODULES = ("rankhouse.studies",)
CORE = [PACKAGE / "warehouse", PACKAGE / "study", PACKAGE / "functions.py", PACKAGE / "generators.py",
        PACKAGE / "measures.py", PACKAGE / "evaluation.py", PACKAGE / "registry.py", PACKAGE / "project.py",
        PACKAGE / "model_tests.py"]  # fmt: skip
STUDIES = sorted(p for p in (PACKAGE / "studies").iterdir() if (p / "__init__.py").is_file())


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code (function-level imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_core_file_imports_a_study_module():
    files = [p for item in CORE for p in (sorted(item.rglob("*.py")) if item.is_dir() else [item])]
    assert len(files) >= 10
    found = {
        (str(path.relative_to(PACKAGE)), module)
        for path in files
        for module in imported_modules(path)
        if module.startswith(STUDY_MODULES)
    }
    assert found == set()


def test_a_study_package_registers_with_nothing_but_the_registry():
    assert [p.name for p in STUDIES] == ["evidence", "features", "fusion", "lanes", "retrieval"]
    for package in STUDIES:
        assert imported_modules(package / "__init__.py") <= {"rankhouse.registry", "pathlib"}, package.name


def test_opening_a_warehouse_and_running_the_measures_loads_no_study_module():
    code = (
        "import sys; from rankhouse.warehouse import Warehouse; from rankhouse.evaluation import evaluate; "
        "from rankhouse.study import Study; "
        "wh = Warehouse(':memory:'); "
        f"evaluate(wh, {str(FIXTURES / 'tiny' / 'qrels.txt')!r}, "
        f"[{str(FIXTURES / 'tiny' / 'run_a.txt')!r}], ['nDCG@3', 'P@2']); "
        f"print(sorted(m for m in sys.modules if m.startswith({STUDY_MODULES!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    registrations = ["rankhouse.studies", *(f"rankhouse.studies.{p.name}" for p in STUDIES)]
    assert out.stdout.strip() == str(registrations)
