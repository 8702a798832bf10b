"""The lanes study (seed 002: robust per-lane admission, variable-depth candidate sets, three orderings;
docs/lanes.md, studies/lanes_*.toml, models/lanes/). Its parts, registered here (rankhouse/registry.py)."""

from rankhouse.registry import Function, Generator, Loader, ReportKind, Writer, register

LOADERS = "rankhouse.loaders.lanes"
register(
    Loader("lanes.narratives", f"{LOADERS}:load_narratives", False,
           (("raw.lane_units", "corpus"), ("raw.queries", "corpus"))),
    Loader("lanes.topic_classes", f"{LOADERS}:load_topic_classes", True, (("topic_classes", "corpus"),)),
    Loader("lanes.runs", f"{LOADERS}:load_lane_runs", False, (("raw.lane_runs", "lane_set"),)),
    Loader("lanes.passage_cache", f"{LOADERS}:load_passage_cache", False, (("raw.passage_score_cache", "scorer"),)),
    Generator("passage_scores", ("corpus", "scorer"), "rankhouse.lanes:generate_passage_scores",
              "every chunk of every lanes candidate scored against every unit of its topic (seed 002)"),
    Function("semantic_chunks", "rankhouse.chunking:chunks_udf", ("VARCHAR", "INTEGER", "INTEGER"),
             "STRUCT(start INTEGER, length INTEGER)[]",
             "seed 002's semantic chunker: (text, size, overlap) -> the chunks' 0-based starts and lengths in "
             "characters, cut at sentence and paragraph boundaries"),
    Writer("lanes", "rankhouse.studies.lanes.writer"),
    ReportKind("lanes", ("results", "rankhouse.studies.lanes.report:candidate_sets"),
               methods=("combo", "breadth", "narrative"), unit="topic", units="topics",
               recognise="rankhouse.studies.lanes.report:recognise"),
)  # fmt: skip
