"""The fusion study (seed 003: null-calibrated fusion of BM25 and dense arms, section 9's measurements;
docs/fusion.md, studies/fusion_*.toml, models/fusion/) and `rankhouse fuse` (run files fused with its models).

    writer.py        its outputs; measurements.py section 9's files; report.py its report sections
    fuse.py, cli.py  `rankhouse fuse`: TREC run files fused with the fusion models

Its inputs are the shared ones (documents, queries, vectors, runs) and its generated tables the core's
(null panels, query blocks, plans); its parts, registered here (rankhouse/registry.py), name their code as
text: registering imports nothing else.
"""

from rankhouse.registry import Command, ReportKind, Writer, register

PACKAGE = "rankhouse.studies.fusion"
register(
    Writer("fusion", f"{PACKAGE}.writer"),
    ReportKind("fusion", ("results", "contrasts", f"{PACKAGE}.report:diagnostics", f"{PACKAGE}.report:section9"),
               methods=("bm25", "dense", "rrf", "rsf", "mixture", "fisher", "stouffer", "dense_admitted",
                        "rrf_admitted", "mixture_admitted", "stouffer_learned"),
               by_measure=True, recognise=f"{PACKAGE}.report:recognise"),
    Command("fuse", f"{PACKAGE}.cli:fuse_command"),
)  # fmt: skip
