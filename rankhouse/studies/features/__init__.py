"""The named-features study (seed 004's E2-E5: 34 named banking features extracted once, cosine, dot and
weighted relevance, E3's semantic groups, E4's controllability cases; docs/features.md,
studies/banking77_features.toml, models/features/, models/extraction/) and `rankhouse features`. Its parts,
registered here (rankhouse/registry.py)."""

from rankhouse.registry import Command, Generator, Loader, ReportKind, Writer, register

register(
    Loader("features.groups", "rankhouse.loaders.features_groups:load_groups", False,
           (("raw.group_paraphrases", "corpus"), ("raw.group_intents", "corpus"))),
    Loader("features.requirements", "rankhouse.loaders.features_groups:load_requirements", False,
           (("raw.group_weights", "corpus"), ("raw.control_cases", "corpus"), ("raw.case_weights", "corpus"),
            ("raw.case_intents", "corpus"))),
    Loader("features.schema", "rankhouse.loaders.features:load_feature_schema", False,
           (("raw.feature_schema", "schema"),)),
    Generator("feature_extraction", ("corpus", "schema", "provider"), "rankhouse.extraction.run:generate_features",
              "named feature values of every train and test message, into the resumable store (seed 004)"),
    Generator("requirement_interpretation", ("corpus", "schema", "provider"),
              "rankhouse.extraction.run:generate_requirements",
              "every E3 phrase of a corpus read as weights over the named features, with flags (seed 004)"),
    Writer("features", "rankhouse.studies.features.writer"),
    ReportKind("features", ("results", "contrasts", "classes", "rankhouse.studies.features.report:ablations",
                            "rankhouse.studies.features.report:e3", "rankhouse.studies.features.report:e4"),
               methods=("bm25", "cosine", "dot", "weighted"), measures=("macro-Top-1",),
               note="Intervals: Wilson 95% for the hit rates (wilson_intervals); the other measures are means.",
               recognise="rankhouse.studies.features.report:recognise",
               facts="rankhouse.studies.features.report:facts", own_markdown=True,
               figure_only=("results", "e3", "e4", "e5")),
    Command("features", "rankhouse.cli.features:features_app"),
)  # fmt: skip
