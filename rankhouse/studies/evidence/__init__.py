"""The evidence study (seed 000: evidence displacement, greedy facet coverage against dense and typed
comparators; docs/evidence.md, docs/evidence_bundle.md, studies/evidence_demo.toml, models/evidence/ with its
staging adapters in models/evidence/staging/).

    loaders.py     an evidence bundle's files: tasks, documents, pools, vectors, question vectors, judgments
    generators.py  the vectors of a bundle's documents and facets, the bootstrap plans per task subset
    select.py      the greedy selection, the SQL function `evidence_greedy`
    writer.py      its outputs (and the bundle as used); report.py its report section
    inputs.sql     its tables in the inputs file (raw.evidence_*); labels.sql its labels tables

Its parts, registered here (rankhouse/registry.py), name their code as text: registering imports nothing else.
"""

from pathlib import Path

from rankhouse.registry import Function, Generator, Loader, ReportKind, Tables, Writer, register

HERE = Path(__file__).parent
PACKAGE = "rankhouse.studies.evidence"
register(
    Loader("evidence.tasks", f"{PACKAGE}.loaders:load_evidence_tasks", False,
           (("raw.evidence_tasks", "bundle"), ("raw.evidence_requirements", "bundle"))),
    Loader("evidence.documents", f"{PACKAGE}.loaders:load_evidence_documents", False,
           (("raw.evidence_documents", "bundle"),)),
    Loader("evidence.pool", f"{PACKAGE}.loaders:load_evidence_pool", False, (("raw.evidence_pools", "bundle"),)),
    Loader("evidence.vectors", f"{PACKAGE}.loaders:load_evidence_vectors", False,
           (("raw.evidence_vectors", "bundle"),)),
    Loader("evidence.question_vectors", f"{PACKAGE}.loaders:load_evidence_question_vectors", False,
           (("raw.evidence_facet_vectors", "bundle"),)),
    Loader("evidence.judgments", f"{PACKAGE}.loaders:load_evidence_judgments", True,
           (("evidence_judgments", "bundle"), ("evidence_obligations", "bundle"))),
    Generator("evidence_vectors", ("bundle",), f"{PACKAGE}.generators:generate_vectors",
              "MiniLM vectors of an evidence bundle's documents and of every task's facets (seed 000)"),
    Generator("evidence_plan", ("bundle", "seed", "replicates"), f"{PACKAGE}.generators:generate_plans",
              "one seeded bootstrap plan per task subset of an evidence bundle, over its own tasks"),
    Function("evidence_greedy", f"{PACKAGE}.select:greedy_udf",
             ("VARCHAR[]", "DOUBLE[][]", "DOUBLE[][]", "INTEGER", "VARCHAR"), "VARCHAR[]",
             "seed 000's greedy facet-coverage selection: (doc_ids, gains per facet, pair penalties, budget, "
             "program SHA-256) -> the selected doc_ids in selection order"),
    Writer("evidence", f"{PACKAGE}.writer"),
    ReportKind("evidence", ("results", "contrasts", f"{PACKAGE}.report:example_tasks"),
               methods=("coverage", "dense", "typed", "oracle"),
               measures=("coverage", "redundancy", "pair_cosine", "objective", "gained_vs_dense", "lost_vs_dense"),
               counts=("gained_vs_dense", "lost_vs_dense"), unit="task", units="tasks", subsets_only=True,
               note="Oracle: a diagnostic upper bound (every 5-subset of each pool), not a method. gained_vs_dense "
                    "and lost_vs_dense are obligations summed over the tasks.",
               recognise=f"{PACKAGE}.report:recognise", facts=f"{PACKAGE}.report:facts"),
    Tables("evidence", inputs=HERE / "inputs.sql", labels=HERE / "labels.sql"),
)  # fmt: skip
