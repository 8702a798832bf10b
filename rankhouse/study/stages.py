"""Study: one protocol on one warehouse, its stages (prepare, freeze, evaluate, run) and `status`. The
input ledger (ledger.py), the freezes (freeze.py) and the results (results.py) are its parts."""

from __future__ import annotations

import json
from pathlib import Path

from rankhouse.errors import GateError, RankhouseError
from rankhouse.generators import GENERATORS, Context
from rankhouse.progress import SILENT, Progress
from rankhouse.study.freeze import Freezing
from rankhouse.study.ledger import InputLedger
from rankhouse.study.protocol import Protocol, study_models
from rankhouse.study.results import Evaluation, Results
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import DuckDBEngine, ModelRun, Runner


class Study(InputLedger, Freezing, Results):
    """One protocol on one warehouse: its stages, its freezes and its gate."""

    def __init__(
        self,
        protocol: Protocol,
        wh: Warehouse,
        freezes: Path | None = None,
        project: Project | None = None,
        progress: Progress | None = None,
        engine: DuckDBEngine | None = None,
    ) -> None:
        self.protocol = protocol
        self.wh = wh
        wh.use(protocol.name)  # the study's namespace: its models, slice of the inputs, results and labels
        # Where the models are computed (DuckDB, or SparkEngine for --engine spark; the caller closes it).
        # No stage depends on it: fingerprints, freezes and the gate are the warehouse's on either engine.
        self.engine = engine or DuckDBEngine()
        self.freezes_dir = freezes or wh.layout.freezes
        # Models are rendered with the protocol's parameters and `study`, its name (the study column of
        # the shared rankings, judgments and measures), where a model declares it.
        self.parameters = {"study": protocol.name, **protocol.parameters}
        if project is None:
            project = Project.load(params=self.parameters, closure=study_models(protocol))
        elif project.params != self.parameters:  # its graph read with other parameters (a model's source may
            project = Project.load(project.roots, params=self.parameters)  # switch on one): read it again
        self.project = project
        if not any("study" in m.parameters for m in self.project.models.values()):
            self.parameters.pop("study")
        self.progress = progress or SILENT  # notes, model lines, loads and bars (rankhouse/progress.py)
        self.say = self.progress.say
        selected = self.project.select(protocol.prepare)
        wrong = [m for m in selected if self.project.models[m].stage != "prepare"]
        if wrong:
            raise RankhouseError(
                f"protocol {protocol.path}: the prepare stage selects evaluate models {', '.join(wrong)}"
            )
        self.evaluate_models = [
            m for m in self.project.select(protocol.evaluate) if self.project.models[m].stage == "evaluate"
        ]
        # The prepare stage also builds every prepare model the evaluate stage reads (the staged inputs,
        # the measure requests, ...), so that all of them are frozen.
        needed = {a for m in self.evaluate_models for a in self.project.ancestors(m)} | set(selected)
        self.prepare_models = [
            m for m in self.project.order if m in needed and self.project.models[m].stage == "prepare"
        ]
        # Views for analysts over the prepare models (header `companion: true`, e.g. rankings keyed by qid
        # and docno): built after them, never frozen (no model reads them).
        prepared = set(self.prepare_models)
        self.companions = [
            m for m in self.project.order
            if self.project.models[m].companion and m not in prepared and set(self.project.parents[m]) <= prepared
        ]  # fmt: skip

    # -- bookkeeping ------------------------------------------------------------------------------
    def runner(self) -> Runner:
        """A runner of the study's models with its parameters, on its engine."""
        return Runner(self.wh, self.project, self.parameters, engine=self.engine)

    # -- stages -----------------------------------------------------------------------------------
    def prepare(self, reload: bool = False, no_smoke: str | None = None) -> list[ModelRun]:
        """Load the label-free inputs (load_inputs), make the generated tables and build the prepare
        models, then their companion views; the labels are not opened. Published for readers at the end.
        `no_smoke`: why a full http extraction may start without a smoke batch (recorded)."""
        with self.wh.writing_inputs():  # one copy of the inputs for the loads and the generators
            self.load_inputs(reload)
            self._generate(no_smoke)
        assert "gate" not in self.wh.attached()
        runs = self.runner().run(self.prepare_models + self.companions, progress=self.progress)
        self.wh.publish()
        return runs

    def _generate(self, no_smoke: str | None = None) -> None:
        """Make the protocol's generated tables (rankhouse/generators.py: vectors, seeded plans, panels...),
        each added to the study's slice as it is made (a generator may build models that read it)."""

        def build(spec: str) -> None:
            self.runner().run(self.project.select(spec), progress=self.progress)

        keys = [f"generate.{item.key}" for item in self.protocol.generated]
        self.wh.sql("DELETE FROM meta.loads WHERE origin LIKE 'generate.%' AND NOT list_contains(?, origin)", [keys])
        with self.wh.writing_inputs():
            for item in self.protocol.generated:
                produced: list[tuple[str, dict, str | None, str]] = []

                def made(table: str, key: dict, source: str | None, origin: str = f"generate.{item.key}") -> None:
                    produced.append((table, key, source, origin))  # noqa: B023 - used within the iteration

                context = Context(
                    self.wh, self.progress.say, self.progress.bar, build, self.progress.meter, made, no_smoke
                )
                GENERATORS[item.kind].run(context, item.key, item.options)
                if not produced:
                    raise RankhouseError(
                        f"[generate.{item.key}] ({item.kind}) named none of the rows it made (Context.produced): "
                        "the study's slice of the inputs would leave them out"
                    )
                self._record_slice(produced, f"generate.{item.key}")

    def evaluate(self, reload: bool = False, full: bool = False) -> Evaluation:
        """Verify the latest freeze (`full`: every table's canonical export again) and its evaluate plan,
        load the label inputs (each read once, into the study's own labels file) and open the gate, build
        the evaluate models there, keep their results by freeze. Labels edited since they were loaded
        are refused; `reload` loads them again from their files."""
        existing = self.freezes()
        if not existing:
            raise GateError(f"study {self.protocol.name} has no freeze yet: run `rankhouse study freeze` first")
        freeze = existing[-1]
        problems = self.verify(freeze, full)
        if problems:
            raise GateError(
                f"the labels stay closed: study {self.protocol.name} changed since freeze {freeze.freeze_id}:\n  "
                + "\n  ".join(problems)
            )
        if freeze.record.get("plan") is None:
            raise GateError(
                f"the labels stay closed: freeze {freeze.freeze_id} was made before freezes recorded the evaluate "
                "plan, so its evaluation is not covered; record it in a new freeze first: rankhouse study freeze "
                f"{self.protocol.path} --supersedes {freeze.freeze_id} --reason 'record the evaluate plan'"
            )
        if reload:
            self.reload(labels=True)
        self.wh.close_gate()
        loaded = self._load(self.label_inputs)
        self.wh.open_gate(verified_freeze=freeze.freeze_id)
        problems = self.content_problems(labels=True, full=full)
        if problems:
            self.wh.close_gate(publish_labels=False)
            raise GateError(
                f"the labels stay closed: study {self.protocol.name}'s labels changed since they were loaded:\n  "
                + "\n  ".join(problems)
            )
        self._record_contents(loaded)
        runner = self.runner()
        runs = runner.run(self.evaluate_models, progress=self.progress)
        new = self._keep_results(freeze)
        fingerprints = {name: runner.fingerprint(name) for name in self.evaluate_models}
        self.wh.sql(
            "INSERT INTO meta.evaluations VALUES (?, current_localtimestamp(), ?)",
            [freeze.freeze_id, json.dumps(fingerprints, sort_keys=True)],
        )
        self.wh.publish()
        return Evaluation(freeze, runs, new)

    def run(self) -> Evaluation:
        """prepare, freeze (reusing an identical freeze), evaluate."""
        self.prepare()
        self.freeze()
        return self.evaluate()

    def status(self, full: bool = False) -> list[str]:
        """Where the study stands, line by line: stage, inputs, prepare models, freezes, evaluation
        (`full`: the latest freeze verified with every table's canonical export). Before a freeze, no
        label input is read: nothing printed is computed from one."""
        lines = [
            f"study      {self.protocol.name}" + (f": {self.protocol.description}" if self.protocol.description else "")
        ]
        lines.append(f"protocol   {self.protocol.path} (sha256 {self.protocol.sha256[:16]}...)")
        lines.append(f"warehouse  {self.wh.path}; namespace {self.protocol.name}; freezes {self.freezes_dir}")
        labelled = f"; {len(self.label_inputs)} label files read at evaluate" if self.label_inputs else ""
        try:
            self.check_inputs()
            lines.append(f"inputs     {len(self.data_inputs)} files, all as the protocol expects{labelled}")
        except RankhouseError as exc:
            lines.append(f"inputs     {exc}")
        runner = self.runner()
        built = runner.last_builds(self.prepare_models)
        stale = [m for m in self.prepare_models if built[m] != runner.fingerprint(m)]
        lines.append(
            f"prepare    {len(self.prepare_models) - len(stale)} of {len(self.prepare_models)} models current"
            + (f" (to build: {', '.join(stale)})" if stale else "")
        )
        stage = "new" if stale else "prepared"
        existing = self.freezes()
        for freeze in existing:
            note = f", supersedes {freeze.supersedes}: {freeze.reason}" if freeze.supersedes else ""
            lines.append(f"freeze     {freeze.freeze_id} at {freeze.record['created_at']}{note}")
        if existing:
            latest = existing[-1]
            problems = self.verify(latest, full)
            lines.append(
                f"current    {latest.freeze_id}: " + ("intact" if not problems else "CHANGED: " + "; ".join(problems))
            )
            if latest.record.get("plan") is None:
                lines.append(f"plan       {latest.freeze_id} records no evaluate plan: freeze again before evaluating")
            evaluated = self.wh.sql(
                "SELECT max(evaluated_at) FROM meta.evaluations WHERE freeze_id = ?", [latest.freeze_id]
            )[0][0]
            stage = "evaluated" if evaluated else "frozen"
            if evaluated:
                lines.append(f"evaluated  {latest.freeze_id} at {evaluated:%Y-%m-%d %H:%M:%S}")
            if problems:
                stage += " (changed since the freeze)"
        else:
            lines.append("freeze     none yet")
        lines.insert(1, f"stage      {stage}")
        return lines
