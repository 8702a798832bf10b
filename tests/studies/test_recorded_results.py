"""Every study reproduces the outputs recorded from the release before the shared metrics layer
(tests/recorded/, tests/recorded_outputs.py says to how many digits and what may differ)."""

from __future__ import annotations

import hashlib
import json

import pytest
from recorded_outputs import differences, outputs, recorded

from rankhouse.paths import ROOT


def check(study: str, out, protocol) -> None:  # noqa: ANN001
    found = differences(study, recorded(study), outputs(out))
    assert found == [], f"{study}: {len(found)} differences from the record:\n" + "\n".join(found[:30])
    results = json.loads((out / "results.json").read_text())
    assert results["protocol_sha256"] == hashlib.sha256(protocol.read_bytes()).hexdigest()


def test_trec_sample_reproduces_its_record(tmp_path):
    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import write_outputs
    from rankhouse.warehouse import Warehouse

    protocol = ROOT / "studies" / "trec_sample.toml"
    with Warehouse(tmp_path / "w.duckdb") as wh:
        study = Study(Protocol.load(protocol), wh, tmp_path / "freezes")
        write_outputs(study, study.run(), tmp_path / "out")
    check("trec_sample", tmp_path / "out", protocol)
    # trec_sample's protocol did not change: its results.json is the record's, byte for byte but for sums
    assert (
        json.loads((tmp_path / "out" / "results.json").read_text())["protocol_sha256"]
        == json.loads(recorded("trec_sample")["results.json"])["protocol_sha256"]
    )


def test_banking77_reproduces_its_record(banking77_study):
    check("banking77", banking77_study.root / "out", ROOT / "studies" / "banking77.toml")


def test_fusion_banking77_reproduces_its_record(fusion_banking77_study):
    check("fusion_banking77", fusion_banking77_study.out, ROOT / "studies" / "fusion_banking77.toml")


def test_evidence_demo_reproduces_its_record(evidence_demo_study):
    check("evidence_demo", evidence_demo_study.out, ROOT / "studies" / "evidence_demo.toml")


def test_lanes_subset_reproduces_its_record(lanes_subset_study):
    check("lanes_subset", lanes_subset_study.out, lanes_subset_study.root / "lanes_subset.toml")


@pytest.mark.parametrize("study", ["banking77", "fusion_banking77", "evidence_demo", "lanes_subset", "trec_sample"])
def test_the_record_is_what_it_says(study):
    """The record holds the studies' results (not an empty or truncated folder)."""
    files = recorded(study)
    methods = json.loads(files["results.json"])["methods"]
    assert methods and all(methods.values())
    assert any(name.endswith(".csv") for name in files)
