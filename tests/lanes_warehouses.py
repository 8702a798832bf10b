"""Small lanes warehouses built by hand (the lanes study's tests, tests/studies/lanes/, and the exact ties of
tests/measures/test_exact_ties.py): documents, topics and lane runs written and loaded, models run with the
study's parameters, passage scores set by hand (HandScores), and the seed's fixed-window chunks in plain
Python."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from rankhouse.studies.lanes.passages import PassageScorer, Scored
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

CORPUS = "c"
SIZE, OVERLAP = 3500, 350


def chunks(text: str) -> list[tuple[int, str]]:
    """(start, text) of each 3,500-character chunk with 350 overlap."""
    stride = SIZE - OVERLAP
    count = 1 if len(text) <= SIZE else 1 + math.ceil((len(text) - SIZE) / stride)
    return [(i * stride, text[i * stride : i * stride + SIZE]) for i in range(count)]


def insert_documents(wh, documents: dict[str, str]) -> None:
    for row, (doc_id, text) in enumerate(documents.items()):
        wh.sql("INSERT INTO raw.documents VALUES (?, ?, ?, ?)", [CORPUS, doc_id, row, text])


def write_topics(folder: Path, topics: dict[str, list[str]]) -> Path:
    """topics: id -> subnarrative names (texts and narratives are made up from them)."""
    path = folder / "topics.jsonl"
    lines = [
        json.dumps({"topic": t, "narrative": f"narrative of {t}", "subnarratives": [
            {"name": s, "text": f"subnarrative {s} of {t}"} for s in subs]})
        for t, subs in topics.items()
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def write_lanes(folder: Path, lanes: list[tuple[str, str, str, int, float]], name: str = "lanes.run") -> Path:
    path = folder / name
    path.write_text("".join(f"{t} Q0 {d} {r} {s!r} {lane}\n" for t, lane, d, r, s in lanes))
    return path


def params(**extra) -> dict:
    return {"corpus": CORPUS, "lane_source": "runs", "lane_set": "lanes", **extra}


def run(wh, selection: str, **extra) -> None:
    p = params(**extra)
    project = Project.load(params=p)
    Runner(wh, project, p).run(project.select(selection))


class HandScores(PassageScorer):
    """A scorer that reads hand-set scores: {(unit text, chunk text): score}."""

    name = "hand"
    fingerprint = "hand-1"

    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = table
        self.calls = 0

    def score(self, wh, units, chunks, progress=None) -> Scored:  # noqa: ANN001
        self.calls += 1
        return Scored(np.array([self.table[u, c] for u, c in zip(units, chunks, strict=True)]), len(units), 1)
