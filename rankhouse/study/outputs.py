"""A study's outputs, written by the writer its protocol names in `[outputs] writer` (default "trec", the
TREC writer of rankhouse/study/trec.py): a module with `write(study, evaluation, out)` (the output files)
and `table(study, evaluation)` (the summary printed after evaluating), over the shared parts in
writing.py, and optionally `needs(protocol, built)`: what the writer reads that the protocol's stages do
not build (check_protocol refuses such a protocol when it is read, before anything is loaded or
written). A study package registers its writer (rankhouse/registry.py Writer); WRITERS reads them there.

    >>> sorted(WRITERS)
    ['evidence', 'features', 'fusion', 'lanes', 'retrieval', 'trec']
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

from rankhouse.errors import RankhouseError
from rankhouse.registry import View, Writer
from rankhouse.study.protocol import Protocol, study_models
from rankhouse.study.results import Evaluation
from rankhouse.study.stages import Study
from rankhouse.warehouse.dag import Project

WRITERS = View(Writer, lambda writer: writer.target)  # writer name -> its module, every registered writer


def writer(study: Study | Protocol) -> ModuleType:
    """The writer module a study's protocol names."""
    protocol = study.protocol if isinstance(study, Study) else study
    name = protocol.outputs.get("writer", "trec")
    if name not in WRITERS:
        raise RankhouseError(f"protocol {protocol.path}: unknown writer {name!r}; known: {', '.join(WRITERS)}")
    return importlib.import_module(WRITERS[name])


def built_models(protocol: Protocol) -> dict[str, set[str]]:
    """The models the protocol's stages build, as a Study selects them, from the DAG alone (no warehouse):
    "prepare" and "evaluate", each the models of that stage (the prepare stage also builds the prepare
    models the evaluate stage reads); an evaluate model's table is kept as results.<model>.

    >>> sorted(built_models(Protocol.load("studies/lanes_banking77.toml"))["evaluate"])[:2]  # doctest: +SKIP
    ['evaluated_queries', 'ideal_ranking']
    """
    project = Project.load(params={"study": protocol.name, **protocol.parameters}, closure=study_models(protocol))
    selected = set(project.select(protocol.prepare)) | set(project.select(protocol.evaluate))
    return {stage: {m for m in selected if project.models[m].stage == stage} for stage in ("prepare", "evaluate")}


def check_protocol(protocol: Protocol) -> None:
    """Refuse a protocol whose writer reads what its stages do not build (the writer's `needs`), when the
    protocol is read: before any input is loaded, model built or output written. The message names the
    protocol, the writer, what is missing and where to add it."""
    module = writer(protocol)
    problems = module.needs(protocol, built_models(protocol)) if hasattr(module, "needs") else []
    if problems:
        name = protocol.outputs.get("writer", "trec")
        raise RankhouseError(f"protocol {protocol.path}: writer {name} " + "; and ".join(problems))


def check_output_dir(out: Path, study: str) -> None:
    """Refuse an output folder that holds another study's results.json (or one no study wrote): a
    folder holds one study's outputs, never a mix of two. Commands call it before they write anything.

    Example: check_output_dir(Path("out/trec_sample"), "trec_sample")
    """
    results = out / "results.json"
    if not results.exists():
        return
    try:
        found = json.loads(results.read_text(encoding="utf-8")).get("study")
    except (OSError, ValueError, AttributeError):
        found = None
    if found == study:
        return
    held = f"the results of study {found}" if isinstance(found, str) else "a results.json that no study wrote"
    raise RankhouseError(
        f"{out} holds {held} ({results}): study {study}'s outputs go to a folder of their own "
        f"(leave out --out for out/{study}/ beside the warehouse, or give another folder)"
    )


def write_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """Write the study's outputs into `out` with the protocol's writer, then provenance.json and the paired
    differences (writing.py), what `rankhouse report` needs besides them; return the files written.
    A folder holding another study's results is refused (check_output_dir)."""
    from rankhouse.study.writing import provenance, write_differences, write_json

    check_output_dir(out, study.protocol.name)
    check_protocol(study.protocol)
    out.mkdir(parents=True, exist_ok=True)
    written = writer(study).write(study, evaluation, out)
    if out / "paired_differences.csv" not in written:  # the features writer labels its own with the extractor
        written += write_differences(study, evaluation, out)
    return [*written, write_json(out / "provenance.json", provenance(study, evaluation, out))]


def summary_table(study: Study, evaluation: Evaluation) -> str:
    """The protocol's writer's summary of an evaluation, as printed by `rankhouse study evaluate`."""
    return writer(study).table(study, evaluation)
