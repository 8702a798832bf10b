"""The fusion study (seed 003: null-calibrated fusion of BM25 and dense arms, section 9's measurements;
docs/fusion.md, studies/fusion_*.toml, models/fusion/) and `rankhouse fuse` (run files fused with its
models). Its parts, registered here (rankhouse/registry.py)."""

from rankhouse.registry import Command, ReportKind, Writer, register

register(
    Writer("fusion", "rankhouse.studies.fusion.writer"),
    ReportKind("fusion", ("results", "contrasts", "rankhouse.studies.fusion.report:diagnostics",
                          "rankhouse.studies.fusion.report:section9"),
               methods=("bm25", "dense", "rrf", "rsf", "mixture", "fisher", "stouffer", "dense_admitted",
                        "rrf_admitted", "mixture_admitted", "stouffer_learned"),
               by_measure=True, recognise="rankhouse.studies.fusion.report:recognise"),
    Command("fuse", "rankhouse.cli.fuse:fuse_command"),
)  # fmt: skip
