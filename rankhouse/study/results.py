"""Evaluate results kept per freeze: the evaluate tables that hold no label rows, copied to the
namespace's results.* under the freeze id; a re-evaluation must give the same rows."""

from __future__ import annotations

from dataclasses import dataclass

from rankhouse.errors import RankhouseError
from rankhouse.study.freeze import Freeze, row_digest, table_digest
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import ModelRun


@dataclass
class Evaluation:
    """What an evaluation did: the freeze it ran under, and whether its results were new."""

    freeze: Freeze
    runs: list[ModelRun]
    new_results: bool


class Results:
    """A study's results by freeze (a part of Study: rankhouse/study/stages.py)."""

    wh: Warehouse
    project: Project
    evaluate_models: list[str]

    def result_models(self) -> list[str]:
        """The evaluate tables whose rows are results (measures, intervals, tests), kept in the namespace's
        results.* per freeze; the others hold labels (judgments, judged rankings: Project.holds_labels) and
        stay in the study's labels file."""
        return [
            m for m in self.evaluate_models
            if self.project.models[m].materialized == "table" and not self.project.holds_labels(m)
        ]  # fmt: skip

    def _keep_results(self, freeze: Freeze) -> bool:
        """Copy evaluate results to results.<model> under the freeze id; re-evaluation must agree (the same
        row digest, or else the same canonical export: row digests that differ may still be equal results,
        e.g. 0.0 and -0.0)."""
        tables = [self.project.models[m] for m in self.result_models()]
        stored = [
            m for m in tables
            if self.wh.table_exists(f"results.{m.name}")
            and self.wh.sql(f"SELECT count(*) FROM results.{m.name} WHERE freeze_id = ?", [freeze.freeze_id])[0][0]
        ]  # fmt: skip
        for model in stored:
            kept = f"(SELECT * EXCLUDE (freeze_id) FROM results.{model.name} WHERE freeze_id = '{freeze.freeze_id}')"
            if row_digest(self.wh, kept) == row_digest(self.wh, model.table):
                continue
            if table_digest(self.wh, kept, model.grain)[0] != table_digest(self.wh, model.table, model.grain)[0]:
                raise RankhouseError(
                    f"freeze {freeze.freeze_id} already has results in results.{model.name} and this evaluation "
                    "gives different ones (an evaluate model or its parameters changed). Results are never "
                    "replaced: record the correction as a new freeze with --supersedes and --reason."
                )
        if stored:
            self.say(f"freeze {freeze.freeze_id} was evaluated before; the results are identical")
            return False
        ns = self.wh.catalog
        with self.wh.transaction():
            for model in tables:
                self.wh.sql(
                    f"CREATE TABLE IF NOT EXISTS {ns}.results.{model.name} AS "
                    f"SELECT CAST(NULL AS VARCHAR) AS freeze_id, * FROM {model.table} WHERE false"
                )
                self.wh.sql(f"INSERT INTO {ns}.results.{model.name} SELECT ?, * FROM {model.table}", [freeze.freeze_id])
        self.say(f"results of {freeze.freeze_id} kept in {self.protocol.name}.results.* "
                 f"({', '.join(m.name for m in tables)})")  # fmt: skip
        return True
