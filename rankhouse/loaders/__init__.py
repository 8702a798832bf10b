"""Loaders: one module per shared input format (TREC runs and qrels, labelled CSV, BEIR, SciFact). Each load
is one transaction and is recorded in meta.sources. A study's own formats are loaders of its package
(rankhouse/studies/<name>/), registered with the rest in rankhouse/registry.py: LOADERS reads from there.

    >>> LOADERS["trec.qrels"].labels
    True
"""

from rankhouse.loaders.beir import (
    load_beir_corpus,
    load_beir_qrels,
    load_beir_queries,
    load_scifact_documents,
    load_scifact_queries,
)
from rankhouse.loaders.sources import LoadResult
from rankhouse.loaders.texts import load_document_classes, load_documents, load_queries, load_query_classes
from rankhouse.loaders.trec import (
    load_prefs,
    load_qrels,
    load_qrels_jg,
    load_qrels_prefs,
    load_run,
    load_zscores,
    write_run,
)
from rankhouse.registry import Loader, View

LOADERS = View(Loader)  # every registered loader, by the name a protocol gives it

__all__ = [
    "LOADERS",
    "LoadResult",
    "Loader",
    "load_beir_corpus",
    "load_beir_qrels",
    "load_beir_queries",
    "load_document_classes",
    "load_documents",
    "load_prefs",
    "load_qrels",
    "load_qrels_jg",
    "load_qrels_prefs",
    "load_queries",
    "load_query_classes",
    "load_run",
    "load_scifact_documents",
    "load_scifact_queries",
    "load_zscores",
    "write_run",
]
