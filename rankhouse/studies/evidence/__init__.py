"""The evidence study (seed 000: evidence displacement, greedy facet coverage against dense and typed
comparators; docs/evidence.md, docs/evidence_bundle.md, studies/evidence_demo.toml, models/evidence/). Its
parts, registered here (rankhouse/registry.py)."""

from rankhouse.registry import Function, Generator, Loader, ReportKind, Writer, register

LOADERS = "rankhouse.loaders.evidence"
STEPS = "rankhouse.studies.evidence.writer"
register(
    Loader("evidence.tasks", f"{LOADERS}:load_evidence_tasks", False,
           (("raw.evidence_tasks", "bundle"), ("raw.evidence_requirements", "bundle"))),
    Loader("evidence.documents", f"{LOADERS}:load_evidence_documents", False, (("raw.evidence_documents", "bundle"),)),
    Loader("evidence.pool", f"{LOADERS}:load_evidence_pool", False, (("raw.evidence_pools", "bundle"),)),
    Loader("evidence.vectors", f"{LOADERS}:load_evidence_vectors", False, (("raw.evidence_vectors", "bundle"),)),
    Loader("evidence.question_vectors", f"{LOADERS}:load_evidence_question_vectors", False,
           (("raw.evidence_facet_vectors", "bundle"),)),
    Loader("evidence.judgments", f"{LOADERS}:load_evidence_judgments", True,
           (("evidence_judgments", "bundle"), ("evidence_obligations", "bundle"))),
    Generator("evidence_vectors", ("bundle",), f"{STEPS}:generate_vectors",
              "MiniLM vectors of an evidence bundle's documents and of every task's facets (seed 000)"),
    Generator("evidence_plan", ("bundle", "seed", "replicates"), f"{STEPS}:generate_plans",
              "one seeded bootstrap plan per task subset of an evidence bundle, over its own tasks"),
    Function("evidence_greedy", "rankhouse.select:greedy_udf",
             ("VARCHAR[]", "DOUBLE[][]", "DOUBLE[][]", "INTEGER", "VARCHAR"), "VARCHAR[]",
             "seed 000's greedy facet-coverage selection: (doc_ids, gains per facet, pair penalties, budget, "
             "program SHA-256) -> the selected doc_ids in selection order"),
    Writer("evidence", "rankhouse.studies.evidence.writer"),
    ReportKind("evidence", ("results", "contrasts", "rankhouse.studies.evidence.report:example_tasks"),
               methods=("coverage", "dense", "typed", "oracle"),
               measures=("coverage", "redundancy", "pair_cosine", "objective", "gained_vs_dense", "lost_vs_dense"),
               counts=("gained_vs_dense", "lost_vs_dense"), unit="task", units="tasks", subsets_only=True,
               note="Oracle: a diagnostic upper bound (every 5-subset of each pool), not a method. gained_vs_dense "
                    "and lost_vs_dense are obligations summed over the tasks.",
               recognise="rankhouse.studies.evidence.report:recognise",
               facts="rankhouse.studies.evidence.report:facts"),
)  # fmt: skip
