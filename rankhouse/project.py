"""An analyst's project: a folder of their own models, studies and model tests, which every command reads
beside rankhouse's own models (docs/projects.md).

    my_project/
      rankhouse_project.toml   the marker `rankhouse init` writes: [project] name = "my_project"
      models/                  the project's models, in folders as rankhouse's are (staging/ reads raw.*)
      studies/                 its protocols: rankhouse study run studies/x.toml --project my_project
      tests/                   its model tests: rankhouse test (rankhouse/model_tests.py)

A command that reads models takes `--project DIR`, or else the current folder when it holds the marker
(rankhouse/cli/common.py's ProjectOption makes it the project in use). `model_roots()` is the one place
that says which folders models are read from: rankhouse's own (rankhouse/paths.py MODELS_DIR) and the
project's models/. A model name defined in both is an error naming both files (catalog.model_paths).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from rankhouse.errors import InputError, RankhouseError
from rankhouse.paths import MODELS_DIR

MARKER = "rankhouse_project.toml"
FOLDERS = ("models", "studies", "tests")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
PROJECT_KEYS = ("name", "description", "modules")


class FileError(InputError):
    """A file that breaks a rule of the whole file (no one line to name): `path: rule (detail)`."""

    def __init__(self, path: str | Path, rule: str, detail: str = "") -> None:
        super().__init__(path, 0, rule, detail)
        self.args = (f"{path}: {rule}" + (f" ({detail})" if detail else ""),)


@dataclass(frozen=True)
class AnalystProject:
    """A project folder: its root (the folder holding rankhouse_project.toml), its name, and the Python
    files of its own studies' parts (`modules`, relative to the root), imported when it is put to use."""

    root: Path
    name: str
    modules: tuple[str, ...] = ()

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def studies(self) -> Path:
        return self.root / "studies"

    @property
    def tests(self) -> Path:
        return self.root / "tests"


def read_project(root: Path) -> AnalystProject:
    """The project whose marker is in `root`; an error naming the marker file, its line and the rule when
    it is not valid.

    Example: read_project(Path("my_project")).models -> PosixPath('/home/me/my_project/models')
    """
    marker = root / MARKER
    spec, text = read_toml(marker)
    table = spec.get("project")
    name = table.get("name") if isinstance(table, dict) else None
    if not isinstance(name, str) or not NAME.match(name):
        raise InputError(
            marker, line_of(text, "name"), 'needs [project] name = "<name>": letters, digits, _ and -, '
            "starting with a letter or _",
        )  # fmt: skip
    unknown = sorted(set(spec) - {"project"}) + sorted(f"project.{k}" for k in set(table) - set(PROJECT_KEYS))
    if unknown:
        raise InputError(marker, line_of(text, unknown[0].split(".")[-1]), f"unknown key {unknown[0]}")
    modules = table.get("modules", [])
    if not isinstance(modules, list) or not all(isinstance(m, str) and m.endswith(".py") for m in modules):
        raise InputError(marker, line_of(text, "modules"), 'modules is a list of .py files: ["studies/x.py"]')
    for module in modules:
        if not (root / module).is_file():
            raise InputError(marker, line_of(text, "modules"), f"modules: no file {root / module}")
    return AnalystProject(root.resolve(), name, tuple(modules))


def read_toml(path: Path) -> tuple[dict, str]:
    """A project file's TOML (the marker, a fixture's files) and its text; an error naming the file and the
    line when it cannot be read or is not valid TOML."""
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text), text
    except OSError as exc:
        raise FileError(path, "cannot read the file", exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise FileError(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))  # Python < 3.14 gives the line only in the message
        line = int(found.group(1)) if found else text.count("\n") + 1  # else: at the end of the document
        raise InputError(path, line, "is not valid TOML", str(exc)) from None


def line_of(text: str, key: str) -> int:
    """The line (from 1) of a TOML text that sets `key` or opens table `key`, else 1: where an error about
    it points."""
    for number, line in enumerate(text.splitlines(), start=1):
        if re.match(rf"^\s*(\[+\s*)?\"?{re.escape(key)}\"?\s*(=|\])", line):
            return number
    return 1


def find_project(option: str | Path | None, cwd: Path | None = None) -> AnalystProject | None:
    """The project a command runs on: the folder `--project` names (which must hold the marker), else the
    current folder when it holds one, else None (rankhouse's own models only)."""
    if option is not None:
        root = Path(option)
        if not root.is_dir():
            raise RankhouseError(f"--project {option}: no such folder (rankhouse init {option} makes a project)")
        if not (root / MARKER).is_file():
            raise RankhouseError(
                f"--project {option}: the folder holds no {MARKER}, so it is not a project (rankhouse init "
                f"{option} makes one)"
            )
        return read_project(root)
    here = cwd or Path.cwd()
    return read_project(here) if (here / MARKER).is_file() else None


_in_use: AnalystProject | None = None


def use_project(project: AnalystProject | None) -> None:
    """Make `project` (or None: rankhouse's own models only) the one commands read models from, its
    Python modules imported (import_modules)."""
    global _in_use
    if project != _in_use:  # another project's parts leave the registry with it
        from rankhouse import registry

        registry.forget(MODULE_PREFIX)
        _imported.clear()
    _in_use = project
    if project is not None:
        import_modules(project)


_imported: dict[Path, ModuleType] = {}
MODULE_PREFIX = "rankhouse_project_"  # a project's modules are imported as rankhouse_project_<name>.<stem>


def import_modules(project: AnalystProject) -> list[ModuleType]:
    """Import the project's own Python files (`[project] modules`), once each: a study of the project
    plugs its parts in as rankhouse's own studies do, with rankhouse.registry.register (a writer, a loader,
    a generator, a SQL function, a report kind), when it is imported. Each is imported as
    `rankhouse_project_<name>.<file stem>`; its parts stay registered while the project is in use.

    Example: a module registering its writer: `register(Writer("first_relevant", __name__))`
    (docs/projects.md)
    """
    found = []
    for module in project.modules:
        path = (project.root / module).resolve()
        if path not in _imported:
            name = f"{MODULE_PREFIX}{project.name.replace('-', '_')}.{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            loaded = importlib.util.module_from_spec(spec)
            sys.modules[name] = loaded
            try:
                spec.loader.exec_module(loaded)
            except Exception as exc:
                del sys.modules[name]
                lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
                where = f"{path}:{lines[-1]}" if lines else str(path)
                raise RankhouseError(
                    f"{where}: the project's module failed on import: {type(exc).__name__}: {exc}"
                ) from None
            _imported[path] = loaded
        found.append(_imported[path])
    return found


def project_in_use() -> AnalystProject | None:
    """The project commands read models from, if any."""
    return _in_use


def model_roots(project: AnalystProject | None = None) -> tuple[Path, ...]:
    """The folders models are read from: rankhouse's own, those of studies installed from outside the
    repository (rankhouse/registry.py Models), then the project's models/ (of `project`, or of the project
    in use) if it has one.

    >>> model_roots()[0].name
    'models'
    """
    from rankhouse.registry import Models, entries

    project = project or _in_use
    studies = tuple(entry.root for entry in entries(Models).values())  # studies installed from outside
    if project is None or not project.models.is_dir():
        return (MODELS_DIR, *studies)
    return (MODELS_DIR, *studies, project.models)


def as_roots(models: Path | str | Sequence[Path] | None) -> tuple[Path, ...]:
    """Model folders as a tuple: one folder, several, or None for model_roots()."""
    if models is None:
        return model_roots()
    if isinstance(models, (str, Path)):
        return (Path(models),)
    return tuple(Path(m) for m in models)


def shown_path(path: Path) -> str:
    """A model file as messages and the catalog show it: `models/<group>/<name>.sql` for rankhouse's own,
    `<project>/models/...` (the project's name) for the project's, the path itself otherwise.

    >>> shown_path(MODELS_DIR / "metrics" / "measure_ap.sql")
    'models/metrics/measure_ap.sql'
    """
    if path.is_relative_to(MODELS_DIR):
        return f"models/{path.relative_to(MODELS_DIR).as_posix()}"
    if _in_use is not None and path.is_relative_to(_in_use.models):
        return f"{_in_use.name}/models/{path.relative_to(_in_use.models).as_posix()}"
    return str(path)


def check_protocol_project(path: Path) -> None:
    """Refuse a protocol that sits in a project's studies/ folder while that project is not in use: its
    models are the project's (run it with --project, or from the project's folder)."""
    folder = Path(path).resolve().parent
    root = folder.parent
    if folder.name != "studies" or not (root / MARKER).is_file():
        return
    if _in_use is not None and _in_use.root == root.resolve():
        return
    raise RankhouseError(
        f"protocol {path} is a study of the project in {root} (its {MARKER}), whose models it reads: run it "
        f"with --project {root} or from that folder"
    )


README = """# {name}

A rankhouse project: models, studies and model tests of your own, read beside rankhouse's own models
by every command run here (or with `--project {name}`). docs/projects.md in rankhouse's repository
says it all; in short:

- `models/`: your models (`.sql` files with rankhouse's header: name, version, stage, grain, audits,
  description), read beside rankhouse's; a name rankhouse has already is an error. Put a model that
  reads loaded inputs (`raw.*`) or labels (`gate.*`) in `models/staging/`.
- `studies/`: your protocols: `rankhouse study run studies/NAME.toml`.
- `tests/`: one folder per fixture: `fixture.toml` (the models it tests, their parameters), `inputs/`
  (a CSV or TOML file per input table, named as the table: `models.rankings.csv`, `raw.runs.csv`)
  and the expected output of each model tested (`<model>.csv`). `rankhouse test` runs them;
  `rankhouse test --update` writes the expected files from the models' output, for you to review.
"""


def init_project(root: Path, name: str | None = None) -> list[Path]:
    """Lay out a new project in `root` (made if missing; an existing folder may not hold a project
    already, and nothing in it is overwritten): the marker, a README and the folders models/, studies/,
    tests/. Returns what it wrote."""
    name = name or root.resolve().name
    if not NAME.match(name):
        raise RankhouseError(
            f"project name {name!r}: letters, digits, _ and -, starting with a letter or _ (give --name NAME)"
        )
    if root.exists() and not root.is_dir():
        raise RankhouseError(f"{root} is a file, not a folder")
    if (root / MARKER).exists():
        raise RankhouseError(f"{root} is a project already ({root / MARKER})")
    taken = [root / f for f in FOLDERS if (root / f).exists() and not (root / f).is_dir()]
    if taken:
        raise RankhouseError(f"{taken[0]} is a file, where the project's folder {taken[0].name}/ goes")
    written = []
    root.mkdir(parents=True, exist_ok=True)
    for folder in FOLDERS:
        (root / folder).mkdir(exist_ok=True)
        written.append(root / folder)
    marker = root / MARKER
    marker.write_text(f'[project]\nname = "{name}"\n', encoding="utf-8")
    written.append(marker)
    readme = root / "README.md"
    if not readme.exists():
        readme.write_text(README.format(name=name), encoding="utf-8")
        written.append(readme)
    return written
