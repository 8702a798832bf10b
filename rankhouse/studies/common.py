"""What every study writer shares: the results.json header, CSV and JSON files, measure blocks.

A study's outputs (DESIGN.md): DIR/results.json, `{study, freeze_id, protocol_sha256, supersedes:
[{freeze_id, replaced_by, reason}], methods: {<method>: {<measure>: {value, ci_low?, ci_high?}}},
contrasts: {<subset>: {<a - b>: {mean, ci_low, ci_high}}}}` plus the writer's own parts, DIR/per_query.csv,
the runs as TREC files and study-specific CSVs; every figure comes from the results.* rows of the
freeze (evaluate outputs) or from the frozen prepare models.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.study import Evaluation, Study


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
    score) rows, in the query's order, as six-field TREC runs tagged with the system (scores at full
    precision)."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    systems: list[str] = []
    handle, current = None, None
    cursor = study.wh.con.execute(sql, params)
    try:
        while rows := cursor.fetchmany(100_000):  # the rows come ordered by system: one file at a time
            for system, qid, doc, rank, score in rows:
                if system != current:
                    if handle is not None:
                        handle.close()
                    current = system
                    systems.append(system)
                    written.append(run_files(folder, systems)[system])
                    handle = written[-1].open("w")
                handle.write(f"{qid} Q0 {doc} {rank} {score!r} {system}\n")
    finally:
        if handle is not None:
            handle.close()
        cursor.fetchall()  # DuckDB 2: a result left open blocks the connection's next statement
    return written


def measure_block(rows: list[tuple]) -> dict:
    """{method: {measure: {value, ci_low?, ci_high?, queries}}} from (method, measure, value, low, high, n) rows."""
    block: dict = {}
    for method, measure, value, low, high, queries in rows:
        entry = {"value": value, "queries": queries}
        if low is not None:
            entry |= {"ci_low": low, "ci_high": high}
        block.setdefault(method, {})[measure] = entry
    return block
