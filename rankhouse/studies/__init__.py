"""Study writers: one small module per kind of study, each with `write(study, evaluation, out)` (the
output files) and `table(study, evaluation)` (the summary printed after evaluating), over the shared
parts in common.py. A protocol names its writer in `[outputs] writer` (default "trec"); a new study
adds a module and a line here, and nothing in the core.

    >>> sorted(WRITERS)
    ['evidence', 'features', 'fusion', 'lanes', 'retrieval', 'trec']
"""

from __future__ import annotations

import importlib
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


def write_outputs(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """Write the study's outputs into `out` with the protocol's writer, then provenance.json and the paired
    differences (studies/common.py), what `rankhouse report` needs besides them; return the files written."""
    from rankhouse.studies.common import provenance, write_differences, write_json

    out.mkdir(parents=True, exist_ok=True)
    written = writer(study).write(study, evaluation, out)
    if out / "paired_differences.csv" not in written:  # the features writer labels its own with the extractor
        written += write_differences(study, evaluation, out)
    return [*written, write_json(out / "provenance.json", provenance(study, evaluation, out))]


def summary_table(study: Study, evaluation: Evaluation) -> str:
    """The protocol's writer's summary of an evaluation, as printed by `rankhouse study evaluate`."""
    return writer(study).table(study, evaluation)
