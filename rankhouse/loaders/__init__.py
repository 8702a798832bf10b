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
    load_evidence_question_vectors,
    load_evidence_tasks,
    load_evidence_vectors,
)
from rankhouse.loaders.features import load_feature_schema
from rankhouse.loaders.features_groups import load_groups, load_requirements
from rankhouse.loaders.lanes import load_lane_runs, load_narratives, load_passage_cache, load_topic_classes
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


@dataclass(frozen=True)
class Loader:
    """A named loader, as a study protocol names it; `labels` loaders write only to the labels file.

    `writes`: the tables a load fills, each with the column that holds the name it loads under (None:
    the load replaces the whole table), so that the rows of one load can be digested and checked
    (rankhouse/study/ledger.py). Labels tables are named as in the labels file.
    """

    name: str
    load: Callable[..., LoadResult]
    labels: bool
    writes: tuple[tuple[str, str | None], ...]


LOADERS = {
    loader.name: loader
    for loader in (
        Loader("trec.run", load_run, False, (("raw.runs", "run_id"), ("raw.run_blocks", "run_id"))),
        Loader("trec.qrels", load_qrels, True, (("qrels", None),)),
        Loader("trec.qrels_jg", load_qrels_jg, True, (("qrels_jg", None),)),
        Loader("trec.prefs", load_prefs, True, (("prefs", None),)),
        Loader("trec.qrels_prefs", load_qrels_prefs, True, (("prefs", None),)),
        Loader("trec.zscores", load_zscores, True, (("zscores", None),)),
        Loader("csv.documents", load_documents, False, (("raw.documents", "corpus"),)),
        Loader("csv.queries", load_queries, False, (("raw.queries", "corpus"),)),
        Loader("csv.document_classes", load_document_classes, True, (("document_classes", "corpus"),)),
        Loader("csv.query_classes", load_query_classes, True, (("query_classes", "corpus"),)),
        Loader("scifact.documents", load_scifact_documents, False, (("raw.documents", "corpus"),)),
        Loader("scifact.queries", load_scifact_queries, False, (("raw.queries", "corpus"),)),
        Loader("beir.corpus", load_beir_corpus, False, (("raw.documents", "corpus"),)),
        Loader("beir.queries", load_beir_queries, False, (("raw.queries", "corpus"),)),
        Loader("beir.qrels", load_beir_qrels, True, (("qrels", None),)),
        Loader("evidence.tasks", load_evidence_tasks, False,
               (("raw.evidence_tasks", "bundle"), ("raw.evidence_requirements", "bundle"))),
        Loader("evidence.documents", load_evidence_documents, False, (("raw.evidence_documents", "bundle"),)),
        Loader("evidence.pool", load_evidence_pool, False, (("raw.evidence_pools", "bundle"),)),
        Loader("evidence.vectors", load_evidence_vectors, False, (("raw.evidence_vectors", "bundle"),)),
        Loader("evidence.question_vectors", load_evidence_question_vectors, False,
               (("raw.evidence_facet_vectors", "bundle"),)),
        Loader("evidence.judgments", load_evidence_judgments, True,
               (("evidence_judgments", "bundle"), ("evidence_obligations", "bundle"))),
        Loader("features.groups", load_groups, False,
               (("raw.group_paraphrases", "corpus"), ("raw.group_intents", "corpus"))),
        Loader("features.requirements", load_requirements, False,
               (("raw.group_weights", "corpus"), ("raw.control_cases", "corpus"), ("raw.case_weights", "corpus"),
                ("raw.case_intents", "corpus"))),
        Loader("lanes.narratives", load_narratives, False, (("raw.lane_units", "corpus"), ("raw.queries", "corpus"))),
        Loader("lanes.topic_classes", load_topic_classes, True, (("topic_classes", "corpus"),)),
        Loader("lanes.runs", load_lane_runs, False, (("raw.lane_runs", "lane_set"),)),
        Loader("lanes.passage_cache", load_passage_cache, False, (("raw.passage_score_cache", "scorer"),)),
        Loader("features.schema", load_feature_schema, False, (("raw.feature_schema", "schema"),)),
    )
}  # fmt: skip

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
    "load_evidence_question_vectors",
    "load_evidence_vectors",
    "load_feature_schema",
    "load_groups",
    "load_lane_runs",
    "load_narratives",
    "load_passage_cache",
    "load_prefs",
    "load_qrels",
    "load_qrels_jg",
    "load_qrels_prefs",
    "load_queries",
    "load_query_classes",
    "load_requirements",
    "load_run",
    "load_scifact_documents",
    "load_scifact_queries",
    "load_topic_classes",
    "load_zscores",
    "write_run",
]
