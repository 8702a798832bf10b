"""Loaders: one module per input format. Each load is one transaction and is recorded in meta.sources."""

from collections.abc import Callable
from dataclasses import dataclass

from rankhouse.loaders.sources import LoadResult
from rankhouse.loaders.trec import load_qrels, load_run, write_run


@dataclass(frozen=True)
class Loader:
    """A named loader, as a study protocol names it; `labels` loaders write only to the labels file."""

    name: str
    load: Callable[..., LoadResult]
    labels: bool


LOADERS = {
    loader.name: loader
    for loader in (
        Loader("trec.run", load_run, labels=False),
        Loader("trec.qrels", load_qrels, labels=True),
    )
}

__all__ = ["LOADERS", "LoadResult", "Loader", "load_qrels", "load_run", "write_run"]
