"""Studies: a protocol file, and the prepare -> freeze -> evaluate stages with the label gate.

A protocol (`studies/<name>.toml`) names its inputs with their SHA-256, its parameters and the
models of each stage:

    [study]
    name = "trec_sample"
    description = "..."

    [inputs.results]                      # paths are relative to the protocol file
    path = "../tests/fixtures/trec_eval/results.test"
    sha256 = "69019319..."
    loader = "trec.run"                   # trec.qrels and other label loaders write the labels file

    [parameters]                          # model parameters (jinja2), part of every fingerprint
    measures = ["AP", "nDCG@10"]

    [stages]
    prepare = "+run_ranking"              # dbt-style selections
    evaluate = "+run_measures"

prepare  loads the non-label inputs and builds the prepare models in the study's namespace; no label
         input is read, hashed or measured (layout: rankhouse/warehouse/layout.py).
freeze   writes `<freezes>/<study>-<n>.json`: the protocol's, inputs' and prepare models' hashes, the
         digests of every frozen table, and the evaluate plan (every evaluate model's plan fingerprint
         and the measures asked for); never overwritten. A changed study, its evaluate plan included,
         needs `--supersedes <previous> --reason TEXT`.
evaluate checks all of it again; only if nothing changed are the labels loaded (into the study's own
         labels file) and opened as `gate`, the evaluate models built there, and the results (the
         evaluate tables that hold no label rows) copied to `results.*` under the freeze id, beside
         the results of earlier freezes.

A study lives in its own namespace of the warehouse: its models, its slice of the shared inputs (the
rows its inputs and generators wrote: namespace.sql's meta.loads), its results and freezes, and its
labels; running another study in the same warehouse changes nothing of it.

A study's stages run on an engine (`--engine spark`: rankhouse/warehouse/spark.py), which is no part of a
fingerprint or a freeze: a study prepared on one engine verifies and evaluates on the other.

The package, one job a module:
    protocol.py  the protocol file, parsed and checked (Protocol, Input, Generated), and which models a
                 study's project holds
    ledger.py    the input ledger: inputs hashed and loaded (each file read once), the study's slice of
                 the shared inputs, the content digests of what each load wrote
    freeze.py    everything that makes or verifies a freeze: canonical exports and row digests, freeze
                 files and their chain, a study's snapshot, `freeze` and `verify`, the change report
    results.py   evaluate results kept per freeze
    stages.py    Study: the stages (prepare, evaluate, run) and `status`, over the three above
"""

from rankhouse.study.freeze import CANONICAL_EXPORT, Freeze, describe_changes
from rankhouse.study.protocol import Generated, Input, Protocol, outputs_dir_for, study_models
from rankhouse.study.results import Evaluation
from rankhouse.study.stages import Study

__all__ = [
    "CANONICAL_EXPORT",
    "Evaluation",
    "Freeze",
    "Generated",
    "Input",
    "Protocol",
    "Study",
    "describe_changes",
    "outputs_dir_for",
    "study_models",
]
