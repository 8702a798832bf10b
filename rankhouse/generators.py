"""What a study's prepare stage makes itself, besides loading files: the `[generate.<key>]` kinds of a
protocol, by name, each with the options it needs and the function that makes it (a registry, like
loaders.LOADERS).

    [generate.top1_bootstrap]
    kind = "resample_plan"            # a key of GENERATORS
    corpus = "banking77"              # its options
    seed = 20260926
    replicates = 10000

A generator function takes (context, key, options): the Context gives it the warehouse, the study's
`say` and progress bars, a shared encoder and a way to build models first; it writes label-free
tables only (the labels are never opened during prepare), reports what it did through `say`, and names
the rows it made (or found made already) with `produced(table, key, source)`: the key columns' values
and the meta.sources name of their content, which become part of the study's slice of the inputs.
Modules are imported when a protocol uses their kind, so the core imports no study.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rankhouse.progress import SILENT, Meter

if TYPE_CHECKING:
    from rankhouse.warehouse import Warehouse


@dataclass
class Context:
    """What a generator may use: the warehouse, reporting, one encoder for all, and model builds."""

    wh: Warehouse
    say: Callable[[str], None]
    progress_bar: Callable[[str], Callable[[int, int], None]]
    build: Callable[[str], None]  # build the models a dbt-style selection names, e.g. "+lane_chunks"
    meter: Callable[..., Meter] = SILENT.meter  # a sink's rows meter (an extraction's progress)
    # the rows a generator made: produced("raw.resample_plans", {"plan": key}, key), into the study's slice
    produced: Callable[[str, dict, str | None], None] = lambda table, key, source: None
    no_smoke: str | None = None  # why a full http extraction starts without a smoke batch (`--no-smoke REASON`)
    _encoder: object | None = field(default=None, repr=False)

    @property
    def encoder(self):  # noqa: ANN201 - rankhouse.encode.Encoder
        """The MiniLM encoder, loaded once for every generator of the study."""
        if self._encoder is None:
            from rankhouse.encode import Encoder

            self._encoder = Encoder()
        return self._encoder


@dataclass(frozen=True)
class Generator:
    """A kind of generated table: its required options and the function (module:attribute) that makes it."""

    kind: str
    options: tuple[str, ...]
    target: str
    description: str

    def run(self, context: Context, key: str, options: dict) -> None:
        """Make the table of protocol entry `key`."""
        module, _, attribute = self.target.partition(":")
        getattr(importlib.import_module(module), attribute)(context, key, options)


GENERATORS = {
    generator.kind: generator
    for generator in (
        Generator("vectors", ("corpus",), "rankhouse.vectors:generate_vectors",
                  "MiniLM vectors of a corpus's documents and queries, through the vector cache"),
        Generator("resample_plan", ("corpus", "seed", "replicates"), "rankhouse.resample:generate_plan",
                  "a seeded paired-bootstrap plan over a corpus's queries, in row order"),
        Generator("cluster_plan", ("corpus", "seed", "replicates"), "rankhouse.resample:generate_cluster_plan",
                  "a seeded bootstrap plan over a corpus's query groups (E3's semantic groups), in group_row order"),
        Generator("permutation_plan", ("corpus", "seed", "replicates"), "rankhouse.resample:generate_permutation_plan",
                  "a seeded sign-flip plan (paired randomization test) over a corpus's queries, in row order"),
        Generator("null_panel", ("corpus", "seed", "size"), "rankhouse.resample:generate_panel",
                  "a seeded random panel of a corpus's documents (a null reference, seed 003); size \"all\": "
                  "a seeded order of every document"),
        Generator("query_blocks", ("corpus", "seed", "blocks"), "rankhouse.resample:generate_blocks",
                  "a seeded partition of a corpus's queries into held-out blocks (seed 003, section 9)"),
        Generator("evidence_vectors", ("bundle",), "rankhouse.studies.evidence:generate_vectors",
                  "MiniLM vectors of an evidence bundle's documents and of every task's facets (seed 000)"),
        Generator("evidence_plan", ("bundle", "seed", "replicates"), "rankhouse.studies.evidence:generate_plans",
                  "one seeded bootstrap plan per task subset of an evidence bundle, over its own tasks"),
        Generator("passage_scores", ("corpus", "scorer"), "rankhouse.lanes:generate_passage_scores",
                  "every chunk of every lanes candidate scored against every unit of its topic (seed 002)"),
        Generator("feature_extraction", ("corpus", "schema", "provider"), "rankhouse.extraction.run:generate_features",
                  "named feature values of every train and test message, into the resumable store (seed 004)"),
        Generator("requirement_interpretation", ("corpus", "schema", "provider"),
                  "rankhouse.extraction.run:generate_requirements",
                  "every E3 phrase of a corpus read as weights over the named features, with flags (seed 004)"),
    )
}  # fmt: skip
