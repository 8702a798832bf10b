"""The retrieval study (the BANKING77 baseline: BM25 against MiniLM dense retrieval, intents as relevance;
docs/banking77.md, studies/banking77.toml, models/retrieval/). Its parts, registered here
(rankhouse/registry.py)."""

from rankhouse.registry import ReportKind, Writer, register

register(
    Writer("retrieval", "rankhouse.studies.retrieval.writer"),
    ReportKind("retrieval", ("results", "contrasts", "classes"), methods=("bm25", "dense"), measures=("macro-Top-1",),
               note="Intervals: Wilson 95% for the hit rates (wilson_intervals); the other measures are means.",
               recognise="rankhouse.studies.retrieval.report:recognise"),
)  # fmt: skip
