"""Loaders: one module per input format. Each load is one transaction and is recorded in meta.sources."""

from rankhouse.loaders.sources import LoadResult
from rankhouse.loaders.trec import load_qrels, load_run, write_run

__all__ = ["LoadResult", "load_qrels", "load_run", "write_run"]
