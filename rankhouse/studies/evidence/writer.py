"""The evidence study's writer (seed 000; its generators: generators.py).

The writer: results.json (`methods.<coverage|dense|typed|oracle>.<measure>.value`, `subsets`,
`contrasts.<subset>.<contrast>` with mean, ci_low, ci_high, the example tasks in full), selected.csv,
per_task.csv and bundle/: `export_bundle` writes the bundle as used, in the documented format, with
every vector and both comparator runs, so that anyone can recompute the selections.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rankhouse.errors import RankhouseError
from rankhouse.studies.evidence.loaders import QUESTIONS
from rankhouse.study.writing import header, write_csv, write_json

if TYPE_CHECKING:
    from rankhouse.study import Evaluation, Study
    from rankhouse.warehouse import Warehouse


# -- the bundle as used ----------------------------------------------------------------------------
BUNDLE_FILES = {"evidence.tasks": "tasks.jsonl", "evidence.documents": "documents.jsonl",
                "evidence.pool": "pool-key.json", "evidence.judgments": "judgments.jsonl",
                "evidence.vectors": "vectors.parquet",
                "evidence.question_vectors": "question_vectors.parquet"}  # fmt: skip


def export_bundle(wh: Warehouse, bundle: str, inputs: Sequence, out: Path) -> dict[str, str]:
    """Write the bundle as used into `out`; return {file: SHA-256}.

    The input files (the protocol's evidence.* inputs of this bundle) are copied byte for byte after
    their SHA-256 is checked against what was loaded. Added: vectors.parquet (doc_id, vector; unless
    the bundle brought its own, which is copied), facet_vectors.parquet (task_id, facet, vector; facet 0
    is the question, facet k + 1 requirement k) and the comparator runs dense.run and typed.run (TREC,
    every pool member, `task_id Q0 doc_id rank score method`).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankhouse.loaders.sources import sha256_file

    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for item in inputs:
        name = BUNDLE_FILES.get(item.loader)
        if name is None or (item.name or Path(item.path).resolve().parent.name).removesuffix(QUESTIONS) != bundle:
            continue
        if sha256_file(item.path) != item.sha256:
            raise RankhouseError(f"{item.path} changed since the study loaded it; not exported")
        shutil.copyfile(item.path, out / name)
    queries = {
        "vectors.parquet": (("doc_id",), "SELECT v.doc_id, v.vector FROM raw.evidence_vectors AS v "
                            "JOIN raw.evidence_documents AS d ON d.bundle = v.bundle AND d.doc_id = v.doc_id "
                            "WHERE v.bundle = ? ORDER BY d.row_index"),
        "facet_vectors.parquet": (("task_id", "facet"), "SELECT v.task_id, v.facet, v.vector "
                                  "FROM raw.evidence_facet_vectors AS v JOIN raw.evidence_tasks AS t "
                                  "ON t.task_id = v.task_id AND (t.bundle = v.bundle OR t.bundle || "
                                  f"'{QUESTIONS}' = v.bundle) WHERE t.bundle = ? ORDER BY t.row_index, v.facet"),
    }  # fmt: skip
    for name, (keys, sql) in queries.items():
        if (out / name).exists():
            continue  # the bundle's own vectors, copied above
        rows = wh.sql(sql, [bundle])
        if not rows:
            raise RankhouseError(f"no vectors of bundle {bundle!r} for {name}")
        data = {key: [row[i] for row in rows] for i, key in enumerate(keys)}
        if "facet" in data:
            data["facet"] = pa.array(data["facet"], type=pa.int32())
        matrix = np.asarray([row[-1] for row in rows], dtype=np.float32)
        vector = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1])
        pq.write_table(pa.table({**data, "vector": vector}), out / name)
    for method in ("dense", "typed"):
        rows = wh.sql(
            "SELECT r.task_id, r.doc_id, r.rank, r.score FROM models.evidence_runs AS r JOIN raw.evidence_tasks AS t "
            "ON t.bundle = r.bundle AND t.task_id = r.task_id WHERE r.bundle = ? AND r.method = ? "
            "ORDER BY t.row_index, r.rank",
            [bundle, method],
        )
        with (out / f"{method}.run").open("w") as handle:
            handle.writelines(f"{task} Q0 {doc} {rank} {score!r} {method}\n" for task, doc, rank, score in rows)
    for path in sorted(out.iterdir()):
        written[path.name] = sha256_file(path)
    return written


# -- the writer ------------------------------------------------------------------------------------
METHODS = ["coverage", "dense", "typed", "oracle"]
MEASURES = ["nDCG@5", "coverage", "redundancy", "pair_cosine", "objective", "gained_vs_dense", "lost_vs_dense"]
DIAGNOSTIC = ["oracle"]  # seed 000: the oracle is a diagnostic bound, not a method
PRIMARY = "coverage"  # the measure of contrasts.<subset>.<contrast>; the others under `measures`


def results(study: Study, evaluation: Evaluation, bundle_files: dict | None = None) -> dict:
    """results.json of an evidence study (seed 000): measures per method and subset, bootstrap contrasts
    (agreed coverage first, the other measures under `measures`), the example tasks in full."""
    wh, freeze_id = study.wh, evaluation.freeze.freeze_id
    bundle = study.protocol.parameters.get("bundle", "evidence_demo")
    subsets: dict = {}
    for subset, method, measure, value, tasks in wh.sql(
        "SELECT subset, method, measure, value, tasks FROM results.evidence_metrics WHERE freeze_id = ? ORDER BY ALL",
        [freeze_id],
    ):
        subsets.setdefault(subset, {}).setdefault(method, {})[measure] = {"value": value, "tasks": tasks}
    everything = next((name for name in subsets if name.startswith("all")), None)
    contrasts: dict = {}
    for subset, contrast, measure, diagnostic, mean, low, high, replicates, tasks in wh.sql(
        "SELECT subset || CAST(queries AS VARCHAR), contrast, measure, list_has_any([system_a, system_b], ?), mean, "
        "ci_low, ci_high, replicates, queries FROM results.paired_bootstrap WHERE freeze_id = ? ORDER BY ALL",
        [DIAGNOSTIC, freeze_id],
    ):
        entry = {"mean": mean, "ci_low": low, "ci_high": high, "replicates": replicates, "tasks": tasks}
        block = contrasts.setdefault(subset, {}).setdefault(contrast, {"diagnostic": diagnostic, "measures": {}})
        if measure == PRIMARY:
            block.update(entry, measure=measure)
        else:
            block["measures"][measure] = entry
    oracle = wh.sql(
        "SELECT subsets_enumerated, tasks_with_ties FROM results.oracle_summary WHERE freeze_id = ? AND bundle = ?",
        [freeze_id, bundle],
    )[0]
    encoder = wh.sql(
        "SELECT path FROM meta.sources WHERE table_name = 'raw.evidence_facet_vectors' AND name = ?", [bundle]
    )
    program = wh.sql("SELECT sha256 FROM models.evidence_programs WHERE program = 'evidence_greedy'")
    own_questions = wh.sql(
        "SELECT count(*) FROM meta.sources WHERE table_name = 'raw.evidence_facet_vectors' AND name = ?",
        [bundle + QUESTIONS],
    )[0][0]
    return {
        **header(study, evaluation),
        "bundle": bundle,
        "methods": subsets.get(everything, {}),
        "subsets": subsets,
        "contrasts": contrasts,
        "examples": examples(study, evaluation),
        "oracle": {"diagnostic": True, "subsets_enumerated": oracle[0], "tasks_with_ties": oracle[1]},
        "greedy_program_sha256": program[0][0] if program else None,
        "encoder": encoder[0][0] if encoder else None,
        "question_vectors": "the bundle's own" if own_questions else "encoded",
        "bundle_files": bundle_files or {},
        "stand_in": stand_in(study),
    }


def stand_in(study: Study) -> dict:
    """Whether the bundle stands in for the seed's benchmark (the protocol's `[outputs] stand_in`, a note
    saying what it is; the demonstration bundle's), as the features study labels a stand-in extractor."""
    note = study.protocol.outputs.get("stand_in")
    if note is not None and not (isinstance(note, str) and note.strip()):
        raise RankhouseError(f"protocol {study.protocol.path}: [outputs] stand_in is a note saying what the bundle "
                             "stands in for (a non-empty string)")  # fmt: skip
    return {"stand_in": note is not None, "note": note}


def examples(study: Study, evaluation: Evaluation) -> dict:
    """The protocol's example tasks in full: question, requirements, every method's documents and labels."""
    wh, freeze_id = study.wh, evaluation.freeze.freeze_id
    bundle = study.protocol.parameters.get("bundle", "evidence_demo")
    examples: dict = {}
    for task_id in study.protocol.parameters.get("example_tasks", []):
        task = wh.sql("SELECT question, split FROM models.evidence_tasks WHERE bundle = ? AND task_id = ?",
                      [bundle, task_id])  # fmt: skip
        if not task:
            continue
        requirements = wh.sql(
            "SELECT text FROM models.evidence_requirements WHERE bundle = ? AND task_id = ? ORDER BY requirement",
            [bundle, task_id],
        )
        columns, rows = wh.columns(
            "SELECT method, rank, doc_id, text, grade_a, grade_b, mean_grade, obligations_a, obligations_b, agreed, "
            "step_gain FROM results.evidence_examples WHERE freeze_id = ? AND task_id = ? ORDER BY method, rank",
            [freeze_id, task_id],
        )
        methods: dict = {}
        for row in rows:
            methods.setdefault(row[0], []).append(dict(zip(columns[1:], row[1:], strict=True)))
        examples[task_id] = {
            "question": task[0][0],
            "split": task[0][1],
            "requirements": [text for (text,) in requirements],
            "methods": {m: methods[m] for m in METHODS if m in methods},
        }
    return examples


def write(study: Study, evaluation: Evaluation, out: Path) -> list[Path]:
    """An evidence study: results.json, selected.csv, per_task.csv and bundle/ (the bundle as used, with
    every vector and the comparator runs, so that the selections can be recomputed independently)."""
    wh, freeze_id = study.wh, evaluation.freeze.freeze_id
    bundle = study.protocol.parameters.get("bundle", "evidence_demo")
    files = export_bundle(wh, bundle, study.protocol.inputs, out / "bundle")
    document = write_json(out / "results.json", results(study, evaluation, files))
    order = "CASE method WHEN 'coverage' THEN 1 WHEN 'dense' THEN 2 WHEN 'typed' THEN 3 ELSE 4 END"
    selected = write_csv(
        out / "selected.csv",
        ["task_id", "method", "rank", "doc_id"],
        wh.sql(
            "SELECT s.task_id, s.method, s.rank, s.doc_id FROM (SELECT bundle, method, task_id, rank, doc_id "
            "FROM models.evidence_selections UNION ALL SELECT bundle, 'oracle', task_id, rank, doc_id "
            "FROM results.evidence_oracle WHERE freeze_id = ?) AS s JOIN models.evidence_tasks AS t "
            "ON t.bundle = s.bundle AND t.task_id = s.task_id WHERE s.bundle = ? "
            f"ORDER BY t.row_index, {order}, s.rank",
            [freeze_id, bundle],
        ),
    )
    columns = ["task_id", "split", "method", "requirements", "covered", "coverage", "assignments", "redundancy",
               "ndcg5", "pair_cosine", "objective", "gained", "lost"]  # fmt: skip
    per_task = write_csv(
        out / "per_task.csv",
        columns,
        wh.sql(
            f"SELECT {', '.join(columns)} FROM results.evidence_task_metrics WHERE freeze_id = ? "
            f"ORDER BY task_row, {order}",
            [freeze_id],
        ),
    )
    return [document, selected, per_task, *(out / "bundle" / name for name in files)]


def table(study: Study, evaluation: Evaluation) -> str:
    """Methods as columns, measures as rows (all tasks); the contrasts per subset; the example tasks."""
    found = results(study, evaluation)
    methods = [m for m in METHODS if m in found["methods"]]
    lines = [f"{'measure':<16}" + "".join(f"{m + (' (diag.)' if m == 'oracle' else ''):>16}" for m in methods)]
    for measure in MEASURES:
        cells = []
        for method in methods:
            value = found["methods"][method].get(measure, {}).get("value")
            cells.append(
                f"{'':>16}" if value is None else f"{value:>16.4f}" if "vs" not in measure else f"{value:>16.0f}"
            )
        lines.append(f"{measure:<16}" + "".join(cells))
    for subset, contrasts in sorted(found["contrasts"].items()):
        for name, c in contrasts.items():
            note = " (diagnostic)" if c["diagnostic"] else ""
            lines.append(
                f"agreed coverage, {name} ({subset}): {c['mean']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}]{note}"
            )
    for task_id, example in found["examples"].items():
        lines.append(f"{task_id} ({example['split']}): {example['question']}")
        for method, documents in example["methods"].items():
            shown = ", ".join(f"{d['doc_id']}[{d['agreed'] or '-'}]" for d in documents)
            lines.append(f"  {method:<9} {shown}")
    return "\n".join(lines)
