"""A study's protocol file, parsed and checked: its inputs (files with their SHA-256 and loader), its
generated tables, parameters and stage selections; and the models a study's project holds."""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.generators import GENERATORS
from rankhouse.loaders import LOADERS
from rankhouse.loaders.sources import sha256_bytes
from rankhouse.project import check_protocol_project, model_roots
from rankhouse.warehouse.catalog import load_models, model_paths
from rankhouse.warehouse.dag import selection_closure
from rankhouse.warehouse.layout import check_namespace


@dataclass(frozen=True)
class Input:
    """A protocol input: a file with its expected SHA-256 and the loader that reads it."""

    key: str
    path: Path
    sha256: str
    loader: str
    name: str | None = None

    @property
    def is_label(self) -> bool:
        return LOADERS[self.loader].labels


@dataclass(frozen=True)
class Generated:
    """A label-free table the prepare stage makes itself (a kind of rankhouse/generators.py: `vectors` of a
    corpus's texts, a seeded `resample_plan` over a corpus's queries, ...)."""

    key: str
    kind: str
    options: dict


@dataclass(frozen=True)
class Protocol:
    """A study's protocol file, parsed and checked."""

    name: str
    description: str
    path: Path
    sha256: str
    inputs: tuple[Input, ...]
    parameters: dict
    prepare: str
    evaluate: str
    outputs: dict = field(default_factory=dict)
    generated: tuple[Generated, ...] = ()

    @classmethod
    def load(cls, path: str | Path) -> Protocol:
        path = Path(path)
        check_protocol_project(path)  # a project's study runs with its project's models
        try:
            data = path.read_bytes()
            spec = tomllib.loads(data.decode("utf-8"))
        except OSError as exc:
            raise RankhouseError(f"cannot read protocol {path}: {exc.strerror}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RankhouseError(f"protocol {path} is not valid TOML: {exc}") from None

        def need(table: dict, key: str, where: str) -> object:
            if key not in table:
                raise RankhouseError(f"protocol {path}: [{where}] lacks {key}")
            return table[key]

        study = need(spec, "study", "study")
        stages = need(spec, "stages", "stages")
        inputs = []
        for key, entry in spec.get("inputs", {}).items():
            loader = _registered(path, f"inputs.{key}", "loader", need(entry, "loader", f"inputs.{key}"), LOADERS)
            inputs.append(
                Input(
                    key=key,
                    path=(path.parent / str(need(entry, "path", f"inputs.{key}"))).resolve(),
                    sha256=str(need(entry, "sha256", f"inputs.{key}")),
                    loader=loader,
                    name=entry.get("name"),
                )
            )
        generated = []
        for key, entry in spec.get("generate", {}).items():
            kind = _registered(path, f"generate.{key}", "kind", need(entry, "kind", f"generate.{key}"), GENERATORS)
            for option in GENERATORS[kind].options:
                need(entry, option, f"generate.{key}")
            generated.append(Generated(key, kind, {k: v for k, v in entry.items() if k != "kind"}))
        name = str(need(study, "name", "study"))
        if name == "default":
            raise RankhouseError(
                f"protocol {path}: study name 'default' is the namespace of commands run outside a study"
            )
        try:
            check_namespace(name)
        except RankhouseError as exc:
            raise RankhouseError(f"protocol {path}: {exc}") from None
        return cls(
            name=name,
            description=str(study.get("description", "")),
            path=path.resolve(),
            sha256=sha256_bytes(data),
            inputs=tuple(inputs),
            parameters=dict(spec.get("parameters", {})),
            prepare=str(need(stages, "prepare", "stages")),
            evaluate=str(need(stages, "evaluate", "stages")),
            outputs=dict(spec.get("outputs", {})),
            generated=tuple(generated),
        )


def _registered(path: Path, where: str, what: str, name: object, registry: dict) -> str:
    """`name`, checked to be one the registry knows (a loader, a generator kind)."""
    if name not in registry:
        raise RankhouseError(f"protocol {path}: [{where}] unknown {what} {name!r}; known: {', '.join(registry)}")
    return str(name)


def outputs_dir_for(db: str, study: str) -> Path:
    """Default place for a study's outputs: `<warehouse>.d/out/<study>/` (layout.py; the current directory's
    `out/<study>/` for a `:memory:` warehouse): they belong to the warehouse, as its freezes do, and one
    folder holds one study's outputs.

    >>> outputs_dir_for("/data/rankhouse.duckdb", "trec_sample")
    PosixPath('/data/rankhouse.d/out/trec_sample')
    """
    from rankhouse.warehouse.layout import MEMORY, Layout

    if db == MEMORY:
        return Path.cwd() / "out" / study
    return Layout.of(db).out / study


def study_models(protocol: Protocol) -> list[str] | None:
    """The models a study's project must hold: those its stages name and every companion view (header
    `companion: true`), with what they read (Project.load's closure), so that a study command renders and
    parses only those; None (the whole project) where a stage selects by descendants, stage or group.

    >>> study_models(Protocol.load(Path("studies/banking77.toml")))[:2]  # doctest: +SKIP
    ['retrieval_runs', 'query_duplicate_counts']
    """
    prepare, evaluate = selection_closure(protocol.prepare), selection_closure(protocol.evaluate)
    if prepare is None or evaluate is None:
        return None
    roots = model_roots()
    # only a file that says `companion` can be one: the others are neither parsed nor checked here
    named = [name for name, path in model_paths(roots).items() if "companion" in path.read_text(encoding="utf-8")]
    companions = [name for name, model in load_models(roots, named).items() if model.companion]
    return list(dict.fromkeys(prepare + evaluate + companions))


def check_regular(item: Input) -> None:
    """A study's input is a regular file: one whose bytes can be hashed and are the bytes then parsed (a
    named pipe or a device would give the hash one content and the loader another)."""
    try:
        mode = os.stat(item.path).st_mode
    except OSError:
        return  # the loader names what is wrong with it
    if not stat.S_ISREG(mode):
        raise RankhouseError(
            f"input {item.key}: {item.path} is not a regular file (a pipe, a device or a folder): a study reads "
            "its inputs from files, whose bytes are hashed as they are parsed"
        )


def shown(path: Path) -> str:
    """A path as recorded in a freeze: relative to the current directory when below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
