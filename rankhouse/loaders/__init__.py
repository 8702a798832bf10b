"""Loaders: one module per input format. Each load is one transaction and is recorded in meta.sources."""

from collections.abc import Callable
from dataclasses import dataclass

from rankhouse.loaders.beir import (
    load_beir_corpus,
    load_beir_qrels,
    load_beir_queries,
    load_scifact_documents,
    load_scifact_queries,
)
from rankhouse.loaders.evidence import (
    load_evidence_documents,
    load_evidence_judgments,
    load_evidence_pool,
    load_evidence_tasks,
    load_evidence_vectors,
)
from rankhouse.loaders.lanes import load_lane_runs, load_narratives, load_passage_cache, load_topic_classes
from rankhouse.loaders.sources import LoadResult
from rankhouse.loaders.texts import load_document_classes, load_documents, load_queries, load_query_classes
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
        Loader("csv.documents", load_documents, labels=False),
        Loader("csv.queries", load_queries, labels=False),
        Loader("csv.document_classes", load_document_classes, labels=True),
        Loader("csv.query_classes", load_query_classes, labels=True),
        Loader("scifact.documents", load_scifact_documents, labels=False),
        Loader("scifact.queries", load_scifact_queries, labels=False),
        Loader("beir.corpus", load_beir_corpus, labels=False),
        Loader("beir.queries", load_beir_queries, labels=False),
        Loader("beir.qrels", load_beir_qrels, labels=True),
        Loader("evidence.tasks", load_evidence_tasks, labels=False),
        Loader("evidence.documents", load_evidence_documents, labels=False),
        Loader("evidence.pool", load_evidence_pool, labels=False),
        Loader("evidence.vectors", load_evidence_vectors, labels=False),
        Loader("evidence.judgments", load_evidence_judgments, labels=True),
        Loader("lanes.narratives", load_narratives, labels=False),
        Loader("lanes.topic_classes", load_topic_classes, labels=True),
        Loader("lanes.runs", load_lane_runs, labels=False),
        Loader("lanes.passage_cache", load_passage_cache, labels=False),
    )
}

__all__ = [
    "LOADERS",
    "LoadResult",
    "Loader",
    "load_beir_corpus",
    "load_beir_qrels",
    "load_beir_queries",
    "load_document_classes",
    "load_documents",
    "load_evidence_documents",
    "load_evidence_judgments",
    "load_evidence_pool",
    "load_evidence_tasks",
    "load_evidence_vectors",
    "load_lane_runs",
    "load_narratives",
    "load_passage_cache",
    "load_qrels",
    "load_queries",
    "load_query_classes",
    "load_run",
    "load_scifact_documents",
    "load_scifact_queries",
    "load_topic_classes",
    "write_run",
]
