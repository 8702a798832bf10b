"""The evidence study's report section (seed 000): the example tasks in full; and its facts (a stand-in
bundle's banner)."""

from __future__ import annotations

from rankhouse.report.plots import number
from rankhouse.report.sections import Block, Folder, Section, Table, Text


def example_tasks(folder: Folder) -> Section:
    """The example tasks in full: each method's five documents with the judges' grades and agreed obligations."""
    r = folder.results
    blocks: list[Block] = [Text(
        f"Bundle {r.get('bundle')}; greedy program SHA-256 {r.get('greedy_program_sha256')}; encoder "
        f"{r.get('encoder')}. Oracle: {number(r.get('oracle', {}).get('subsets_enumerated'))} subsets enumerated, "
        f"{number(r.get('oracle', {}).get('tasks_with_ties'))} tasks with ties (diagnostic). Per task: per_task.csv; "
        "the selections: selected.csv; the bundle as used: bundle/."
    )]  # fmt: skip
    for task_id, example in r.get("examples", {}).items():
        rows = [[method, str(d["rank"]), d["doc_id"], number(d.get("mean_grade"), 1), d.get("agreed") or "",
                 d.get("text", "")] for method, documents in example["methods"].items() for d in documents]  # fmt: skip
        requirements = "; ".join(f"{i}: {t}" for i, t in enumerate(example.get("requirements", [])))
        blocks.append(Table(["method", "rank", "doc_id", "mean grade", "agreed", "text"], rows,
                            [False, True, False, True, False, False],
                            f"Task {task_id} ({example.get('split')}): {example.get('question')} Requirements: "
                            f"{requirements}."))  # fmt: skip
    return Section("evidence", "Example tasks", blocks)


def recognise(folder: Folder) -> bool:
    """An output directory of the evidence writer (one written before provenance.json named its writer)."""
    return "examples" in folder.results and "bundle" in folder.results


def facts(results: dict) -> tuple[list[tuple[str, str]], str | None]:
    """Whether the bundle is a stand-in, under the title; a stand-in's banner."""
    bundle = results.get("stand_in")
    if not isinstance(bundle, dict):
        return [], None
    banner = None
    if bundle.get("stand_in"):
        banner = f"Every figure here is a stand-in's. {bundle.get('note') or ''}".strip()
    return [("stand-in", "yes" if bundle.get("stand_in") else "no")], banner
