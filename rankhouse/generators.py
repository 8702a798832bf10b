"""What a study's prepare stage makes itself, besides loading files: the `[generate.<key>]` kinds of a
protocol, by name, each with the options it needs and the function that makes it: the generators of
rankhouse/registry.py (the core's plans, panels and vectors, and each study package's own).

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

    >>> GENERATORS["resample_plan"].options
    ('corpus', 'seed', 'replicates')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rankhouse.progress import SILENT, Meter
from rankhouse.registry import Generator, View

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


GENERATORS = View(Generator)  # every registered kind, by name (rankhouse/registry.py)
