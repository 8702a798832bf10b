"""Study writers: one small module per kind of study, each with `write(study, evaluation, out)` (the
output files) and `table(study, evaluation)` (the summary printed after evaluating), over the shared
parts in common.py. A protocol names its writer in `[outputs] writer` (default "trec"); a new study
adds a module and a line here, and nothing in the core.

    >>> sorted(WRITERS)
    ['evidence', 'features', 'fusion', 'lanes', 'retrieval', 'trec']
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

from rankhouse.errors import RankhouseError
from rankhouse.study import Evaluation, Study

WRITERS = {
    name: f"rankhouse.studies.{name}" for name in ("trec", "retrieval", "fusion", "evidence", "lanes", "features")
}


def writer(study: Study) -> ModuleType:
    """The writer module a study's protocol names."""
    name = study.protocol.outputs.get("writer", "trec")
    if name not in WRITERS:
        raise RankhouseError(f"protocol {study.protocol.path}: unknown writer {name!r}; known: {', '.join(WRITERS)}")
    return importlib.import_module(WRITERS[name])


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
    differences (studies/common.py), what `rankhouse report` needs besides them; return the files written.
    A folder holding another study's results is refused (check_output_dir)."""
    from rankhouse.studies.common import provenance, write_differences, write_json

    check_output_dir(out, study.protocol.name)
    out.mkdir(parents=True, exist_ok=True)
    written = writer(study).write(study, evaluation, out)
    if out / "paired_differences.csv" not in written:  # the features writer labels its own with the extractor
        written += write_differences(study, evaluation, out)
    return [*written, write_json(out / "provenance.json", provenance(study, evaluation, out))]


def summary_table(study: Study, evaluation: Evaluation) -> str:
    """The protocol's writer's summary of an evaluation, as printed by `rankhouse study evaluate`."""
    return writer(study).table(study, evaluation)
