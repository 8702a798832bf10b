"""The retrieval study (the BANKING77 baseline: BM25 against MiniLM dense retrieval, intents as relevance;
docs/banking77.md, studies/banking77.toml, models/retrieval/, whose BM25 and dense rankings the fusion,
lanes and features studies read too).

    writer.py   its outputs; report.py recognises them (its report is the shared sections')

Its inputs are the shared ones (labelled CSV texts and classes) and its generated tables the core's
(vectors, plans); its parts, registered here (rankhouse/registry.py), name their code as text.
"""

from rankhouse.registry import ReportKind, Writer, register

PACKAGE = "rankhouse.studies.retrieval"
register(
    Writer("retrieval", f"{PACKAGE}.writer"),
    ReportKind("retrieval", ("results", "contrasts", "classes"), methods=("bm25", "dense"), measures=("macro-Top-1",),
               note="Intervals: Wilson 95% for the hit rates (wilson_intervals); the other measures are means.",
               recognise=f"{PACKAGE}.report:recognise"),
)  # fmt: skip
