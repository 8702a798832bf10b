"""The lanes study (seed 002: robust per-lane admission, variable-depth candidate sets, three orderings;
docs/lanes.md, studies/lanes_*.toml, models/lanes/ with its staging adapters in models/lanes/staging/).

    loaders.py   its inputs: narratives, topic classes (labels), lane runs, a passage-score cache
    passages.py  passage scoring, the `passage_scores` generator, with its pluggable scorers (MiniLM cosine;
                 rerank.py: a cross-encoder behind an HTTP /rerank endpoint)
    chunking.py  seed 002's semantic chunker, the SQL function `semantic_chunks`
    runs.py      its orderings and lanes as TREC files, the manifest's per-topic receipts
    writer.py    its outputs; report.py its report section; cli.py `rankhouse lanes export`
    inputs.sql   its tables in the inputs file (raw.lane_*, raw.passage_*, meta.passage_*); labels.sql its
                 labels table (topic_classes)

Its parts, registered here (rankhouse/registry.py), name their code as text: registering imports nothing else.
"""

from pathlib import Path

from rankhouse.registry import Command, Function, Generator, Loader, ReportKind, Tables, Writer, register

HERE = Path(__file__).parent
PACKAGE = "rankhouse.studies.lanes"
register(
    Loader("lanes.narratives", f"{PACKAGE}.loaders:load_narratives", False,
           (("raw.lane_units", "corpus"), ("raw.queries", "corpus"))),
    Loader("lanes.topic_classes", f"{PACKAGE}.loaders:load_topic_classes", True, (("topic_classes", "corpus"),)),
    Loader("lanes.runs", f"{PACKAGE}.loaders:load_lane_runs", False, (("raw.lane_runs", "lane_set"),)),
    Loader("lanes.passage_cache", f"{PACKAGE}.loaders:load_passage_cache", False,
           (("raw.passage_score_cache", "scorer"),)),
    Generator("passage_scores", ("corpus", "scorer"), f"{PACKAGE}.passages:generate_passage_scores",
              "every chunk of every lanes candidate scored against every unit of its topic (seed 002)"),
    Function("semantic_chunks", f"{PACKAGE}.chunking:chunks_udf", ("VARCHAR", "INTEGER", "INTEGER"),
             "STRUCT(start INTEGER, length INTEGER)[]",
             "seed 002's semantic chunker: (text, size, overlap) -> the chunks' 0-based starts and lengths in "
             "characters, cut at sentence and paragraph boundaries"),
    Writer("lanes", f"{PACKAGE}.writer"),
    ReportKind("lanes", ("results", f"{PACKAGE}.report:candidate_sets"), methods=("combo", "breadth", "narrative"),
               unit="topic", units="topics", recognise=f"{PACKAGE}.report:recognise"),
    Tables("lanes", inputs=HERE / "inputs.sql", labels=HERE / "labels.sql"),
    Command("lanes", f"{PACKAGE}.cli:lanes_app"),
)  # fmt: skip
