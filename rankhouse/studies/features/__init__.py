"""The named-features study (seed 004's E2-E5: 34 named banking features extracted once, cosine, dot and
weighted relevance, E3's semantic groups, E4's controllability cases; docs/features.md,
studies/banking77_features.toml, models/features/ with its staging adapters in models/features/staging/).

    schema.py, groups.py  its inputs: the feature schema, E3's groups and E3/E4's requirements
    extraction/           the extraction into the resumable store (the `feature_extraction` and
                          `requirement_interpretation` generators: an OpenAI-compatible http provider, the
                          offline minilm stand-in) and cli.py `rankhouse features extract|receipts`
    writer.py             its outputs (requirements.py E3's and E4's); report.py its report sections
    inputs.sql            its tables in the inputs file (raw.feature_*, raw.extraction_calls,
                          raw.requirement_*, raw.group_*, raw.control_cases, raw.case_*)

It builds on the retrieval study (its E1 and E2 are that study's models, its writer extends that writer's).
Its parts, registered here (rankhouse/registry.py), name their code as text: registering imports nothing else.
"""

from pathlib import Path

from rankhouse.registry import Command, Generator, Loader, ReportKind, Tables, Writer, register

HERE = Path(__file__).parent
PACKAGE = "rankhouse.studies.features"
register(
    Loader("features.groups", f"{PACKAGE}.groups:load_groups", False,
           (("raw.group_paraphrases", "corpus"), ("raw.group_intents", "corpus"))),
    Loader("features.requirements", f"{PACKAGE}.groups:load_requirements", False,
           (("raw.group_weights", "corpus"), ("raw.control_cases", "corpus"), ("raw.case_weights", "corpus"),
            ("raw.case_intents", "corpus"))),
    Loader("features.schema", f"{PACKAGE}.schema:load_feature_schema", False, (("raw.feature_schema", "schema"),)),
    Generator("feature_extraction", ("corpus", "schema", "provider"), f"{PACKAGE}.extraction.run:generate_features",
              "named feature values of every train and test message, into the resumable store (seed 004)"),
    Generator("requirement_interpretation", ("corpus", "schema", "provider"),
              f"{PACKAGE}.extraction.run:generate_requirements",
              "every E3 phrase of a corpus read as weights over the named features, with flags (seed 004)"),
    Writer("features", f"{PACKAGE}.writer"),
    ReportKind("features", ("results", "contrasts", "classes", f"{PACKAGE}.report:ablations", f"{PACKAGE}.report:e3",
                            f"{PACKAGE}.report:e4"),
               methods=("bm25", "cosine", "dot", "weighted"), measures=("macro-Top-1",),
               note="Intervals: Wilson 95% for the hit rates (wilson_intervals); the other measures are means.",
               recognise=f"{PACKAGE}.report:recognise", facts=f"{PACKAGE}.report:facts", own_markdown=True,
               figure_only=("results", "e3", "e4", "e5")),
    Tables("features", inputs=HERE / "inputs.sql"),
    Command("features", f"{PACKAGE}.cli:features_app"),
)  # fmt: skip
