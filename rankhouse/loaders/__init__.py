"""Loaders: one module per shared input format (TREC runs and qrels, labelled CSV, BEIR, SciFact). Each load
is one transaction and is recorded in meta.sources. A study's own formats are loaders of its package
(rankhouse/studies/<name>/), registered with the rest in rankhouse/registry.py: LOADERS reads from there.
The loader functions are imported from their modules on first use (Arrow with them): a protocol's names
are checked, and its files hashed, without them.

    >>> LOADERS["trec.qrels"].labels
    True
"""

from __future__ import annotations

import importlib

from rankhouse.loaders.sources import LoadResult
from rankhouse.registry import Loader, View

LOADERS = View(Loader)  # every registered loader, by the name a protocol gives it
MODULES = {
    "rankhouse.loaders.beir": ("load_beir_corpus", "load_beir_qrels", "load_beir_queries", "load_scifact_documents",
                               "load_scifact_queries"),
    "rankhouse.loaders.texts": ("load_document_classes", "load_documents", "load_queries", "load_query_classes"),
    "rankhouse.loaders.trec": ("load_prefs", "load_qrels", "load_qrels_jg", "load_qrels_prefs", "load_run",
                               "load_zscores", "write_run"),
}  # fmt: skip

__all__ = ["LOADERS", "LoadResult", "Loader", *sorted(name for names in MODULES.values() for name in names)]


def __getattr__(name: str) -> object:
    """A loader function, from its module when first used."""
    for module, names in MODULES.items():
        if name in names:
            return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'rankhouse.loaders' has no attribute {name!r}")
