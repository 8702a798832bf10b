"""What every study writer shares (rankhouse/study/outputs.py): the results.json header, CSV and JSON files,
measure blocks.

A study's outputs (DESIGN.md): DIR/results.json, `{study, freeze_id, protocol_sha256, supersedes:
[{freeze_id, replaced_by, reason}], methods: {<method>: {<measure>: {value, ci_low?, ci_high?}}},
contrasts: {<subset>: {<a - b>: {mean, ci_low, ci_high}}}}` plus the writer's own parts, DIR/per_query.csv,
the runs as TREC files and study-specific CSVs; every figure comes from the results.* rows of the
freeze (evaluate outputs) or from the frozen prepare models.

Every study also gets (outputs.write_outputs): DIR/provenance.json (`provenance`: the protocol's
parameters, the freeze chain with each file's SHA-256 and reason, the inputs and loaded sources with
their SHA-256, every prepare and evaluate model's fingerprint, package versions, reproduction commands)
and, when the study has paired contrasts, DIR/paired_differences.csv (the per-query differences of
results.paired_differences), so that `rankhouse report DIR` can draw everything from the directory alone.
"""

from __future__ import annotations

import csv
import json
import platform
from importlib import metadata
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.study.results import Evaluation
from rankhouse.study.stages import Study


def superseded_chain(study: Study, freeze_id: str) -> list[dict]:
    """The freezes that `freeze_id` replaces, newest first, with their reasons."""
    by_id = {f.freeze_id: f for f in study.freezes()}
    chain, current = [], by_id[freeze_id]
    while current.supersedes:
        chain.append({"freeze_id": current.supersedes, "replaced_by": current.freeze_id, "reason": current.reason})
        current = by_id[current.supersedes]
    return chain


def header(study: Study, evaluation: Evaluation) -> dict:
    """The part of results.json every study has: study, freeze, protocol hash, superseded freezes."""
    freeze_id = evaluation.freeze.freeze_id
    return {
        "study": study.protocol.name,
        "freeze_id": freeze_id,
        "protocol_sha256": study.protocol.sha256,
        "supersedes": superseded_chain(study, freeze_id),
    }


def write_csv(path: Path, columns: list[str], rows: list[tuple]) -> Path:
    """Write a CSV file (a header row, then the rows); return its path."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    return path


def write_json(path: Path, document: dict) -> Path:
    """Write results.json (keys sorted, two-space indent, a final newline); return its path."""
    path.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")
    return path


def run_files(folder: Path, systems: list[str]) -> dict[str, Path]:
    """Per system, its run file `folder/<system>.run`; a system named after its file already (a run
    loaded from `a.run` is system `a.run`) keeps that name rather than becoming `a.run.run`. Two systems
    that would share a file are refused.

    >>> [path.name for path in run_files(Path("runs"), ["bm25", "results.test", "a.run"]).values()]
    ['bm25.run', 'results.test.run', 'a.run']
    """
    files = {system: folder / (system if system.endswith(".run") else f"{system}.run") for system in systems}
    by_file: dict[Path, list[str]] = {}
    for system, path in files.items():
        by_file.setdefault(path, []).append(system)
    shared = [systems for systems in by_file.values() if len(systems) > 1]
    if shared:
        raise RankhouseError(f"systems {' and '.join(shared[0])} would both be written to {files[shared[0][0]]}")
    return files


def write_runs(study: Study, folder: Path, sql: str, params: list | None = None) -> list[Path]:
    """Write `folder/<system>.run` (run_files) for every system of a query's (system, qid, docno, rank,
    score, query_order) rows, queries in query_order and each query's documents by rank, as six-field
    TREC runs tagged with the system. DuckDB writes the lines: a score as the shortest text that reads
    back as the same double, as Python's repr writes it (tests/loaders/test_runfiles.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = f"({sql}) AS rh_rows(system, qid, docno, rank, score, query_order)"
    systems = [system for (system,) in study.wh.sql(f"SELECT DISTINCT system FROM {rows} ORDER BY system", params)]
    files = run_files(folder, systems)
    line = "concat_ws(' ', qid, 'Q0', docno, rank, CAST(CAST(score AS DOUBLE) AS VARCHAR), system)"
    for system in systems:
        query = f"SELECT {line} FROM {rows} WHERE system = ? ORDER BY query_order, rank"
        study.wh.export_lines(query, [*(params or []), system], files[system])
    return [files[system] for system in systems]


def measure_block(rows: list[tuple]) -> dict:
    """{method: {measure: {value, ci_low?, ci_high?, queries}}} from (method, measure, value, low, high, n) rows."""
    block: dict = {}
    for method, measure, value, low, high, queries in rows:
        entry = {"value": value, "queries": queries}
        if low is not None:
            entry |= {"ci_low": low, "ci_high": high}
        block.setdefault(method, {})[measure] = entry
    return block


# -- provenance and paired differences (every study) ------------------------------------------------
PACKAGES = ("rankhouse", "duckdb", "sqlglot", "numpy", "pyarrow", "jinja2", "typer", "onnxruntime", "tokenizers")


def shown(path: Path | str) -> str:
    """A path as a command shows it: relative to the current directory when under it, else as given.

    Example: shown(Path.cwd() / "studies" / "banking77.toml")  # 'studies/banking77.toml'
    """
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def reproduction(study: Study, out: Path | str = "OUT") -> list[str]:
    """The commands that reproduce these outputs from the protocol (same warehouse and freezes folder).

    Example: reproduction(study, Path("out/banking77"))[0]  # 'rankhouse study run studies/... --out out/banking77'
    """
    protocol, db = shown(study.protocol.path), shown(Path(study.wh.path))
    where = f"--db {db} --freezes {shown(study.freezes_dir)}"
    out = shown(out) if out != "OUT" else out
    return [
        f"rankhouse study run {protocol} {where} --out {out}",
        f"rankhouse study status {protocol} {where}",
        f"rankhouse study prepare {protocol} {where}  # the stages one by one: prepare, freeze, evaluate",
        f"rankhouse study freeze {protocol} {where}",
        f"rankhouse study evaluate {protocol} {where} --out {out}",
    ]


def versions() -> dict[str, str | None]:
    """The Python version and the installed version of every package the warehouse runs on.

    Example: versions()["duckdb"]  # '2.0.1'
    """
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def freeze_chain(study: Study) -> list[dict]:
    """Every freeze of the study, oldest first: id, time, its file's SHA-256, the predecessor's SHA-256,
    what it supersedes and why, and the versions that made it.

    Example: [f["freeze_id"] for f in freeze_chain(study)]  # ['banking77-1', 'banking77-2']
    """
    return [
        {
            "freeze_id": f.freeze_id,
            "n": f.n,
            "created_at": f.record.get("created_at"),
            "file_sha256": f.file_sha256,
            "previous_sha256": f.record.get("previous_sha256"),
            "supersedes": f.supersedes,
            "reason": f.reason,
            "rankhouse_version": f.record.get("rankhouse_version"),
            "duckdb_version": f.record.get("duckdb_version"),
        }
        for f in study.freezes()
    ]


def loaded_sources(study: Study) -> list[dict]:
    """Every loaded or generated source the study's models read (meta.sources of its slice of the frozen raw
    tables): table, name, SHA-256, rows, loader.

    Example: [s["table"] for s in loaded_sources(study)]  # ['raw.documents', 'raw.queries', ...]
    """
    raw_tables = [table for table in study.frozen_tables() if table.startswith("raw.")]
    columns, rows = study.wh.columns(
        "SELECT DISTINCT s.table_name AS table, s.name, s.sha256, s.rows, s.loader FROM inputs.meta.sources AS s "
        "JOIN meta.loads AS l ON l.table_name = s.table_name AND l.source_name = s.name "
        "WHERE list_contains(?, s.table_name) ORDER BY ALL",
        [raw_tables],
    )
    return [dict(zip(columns, row)) for row in rows]


def provenance(study: Study, evaluation: Evaluation, out: Path) -> dict:
    """provenance.json: where the outputs come from (see the module's docstring).

    Example: provenance(study, evaluation, Path("out/banking77"))["freezes"][-1]["file_sha256"]
    """
    freeze = evaluation.freeze
    evaluated = study.wh.sql(
        "SELECT fingerprints FROM meta.evaluations WHERE freeze_id = ? ORDER BY evaluated_at DESC LIMIT 1",
        [freeze.freeze_id],
    )
    return {
        "study": study.protocol.name,
        "description": study.protocol.description,
        "writer": study.protocol.outputs.get("writer", "trec"),
        "freeze_id": freeze.freeze_id,
        "protocol": {"path": shown(study.protocol.path), "sha256": study.protocol.sha256},
        "parameters": study.protocol.parameters,
        "freezes": freeze_chain(study),
        "inputs": freeze.record.get("inputs", {}),
        "sources": loaded_sources(study),
        "models": {
            "prepare": freeze.record.get("models", {}),
            "evaluate": json.loads(evaluated[0][0]) if evaluated else {},
        },
        "plan": freeze.record.get("plan"),
        "versions": versions(),
        "reproduction": [*reproduction(study, out), f"rankhouse report {shown(out)}"],
    }


DIFFERENCES = ["study", "subset", "contrast", "system_a", "system_b", "measure", "query", "difference"]


def differences(study: Study, evaluation: Evaluation) -> list[tuple]:
    """Every paired contrast's per-query difference a - b (results.paired_differences) of the study and its
    parts, in the study's query order: the rows of paired_differences.csv (columns DIFFERENCES).

    Example: differences(study, evaluation)[0]  # ('banking77', 'all', 'dense - bm25', 'dense', 'bm25', ...)
    """
    if not study.wh.table_exists("results.paired_differences"):
        return []
    return study.wh.sql(
        f"SELECT {', '.join(DIFFERENCES)} FROM results.paired_differences WHERE freeze_id = ? "
        "AND (study = ? OR starts_with(study, ?)) ORDER BY study, subset, contrast, measure, subset_position",
        [evaluation.freeze.freeze_id, study.protocol.name, study.protocol.name + "/"],
    )


def write_differences(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """paired_differences.csv (`differences`) if the study has any contrast; nothing otherwise.

    Example: write_differences(study, evaluation, Path("out/b77"))  # [Path('out/b77/paired_differences.csv')]
    """
    rows = differences(study, evaluation)
    return [write_csv(out / "paired_differences.csv", DIFFERENCES, rows)] if rows else []
