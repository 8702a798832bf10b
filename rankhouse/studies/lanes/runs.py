"""The lanes study's run files (seed 002, "Provenance and validation"): its orderings and lanes written as
TREC files for submission, and the per-topic receipts of its manifest. Validating them and the manifest's
hashes are the shared rankhouse/runfiles.py's.

`write_orderings` writes each ordering of models.lane_orderings as a six-field TREC file, `topic Q0 docno
rank score tag`, topics in file order and ranks 1..k_t; the score is k_t + 1 - rank, so that trec_eval
(score descending, ties by docno) reads the file in exactly the ordering's order. `write_lanes` writes the
lanes a study admitted from (tag = lane id), loadable with `lanes.runs`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rankhouse.errors import RankhouseError

if TYPE_CHECKING:
    from rankhouse.warehouse import Warehouse

METHODS = ("combo", "breadth", "narrative")


def _format_score(score: float) -> str:
    return repr(float(score))


def write_orderings(
    wh: Warehouse, corpus: str, out: str | Path, tag: str = "rankhouse-lanes", methods: Sequence[str] = METHODS
) -> list[Path]:
    """Write `<out>/<method>.run` for each ordering of `corpus`, run tag `<tag>-<method>`; return the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for method in methods:
        path = out / f"{method}.run"
        write_ordering(wh, corpus, method, path, f"{tag}-{method}")
        written.append(path)
    return written


def write_ordering(wh: Warehouse, corpus: str, method: str, path: str | Path, tag: str) -> int:
    """Write one ordering (combo, breadth or narrative) of `corpus` as a TREC file; return the line count."""
    if not wh.table_exists("models.lane_orderings"):
        raise RankhouseError("no lane orderings in the warehouse: run the lanes study's prepare stage first")
    if re.search(r"\s", tag) or not tag:
        raise RankhouseError(f"a run tag is one word without whitespace, not {tag!r}")
    rows = wh.sql(
        "SELECT o.topic, o.doc_id, o.rank, o.score FROM models.lane_orderings AS o "
        "JOIN models.lane_topics AS t ON t.corpus = o.corpus AND t.topic = o.topic "
        "WHERE o.corpus = ? AND o.method = ? ORDER BY t.topic_row, o.rank",
        [corpus, method],
    )
    if not rows:
        raise RankhouseError(f"no {method!r} ordering of corpus {corpus!r} (orderings: {', '.join(METHODS)})")
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{t} Q0 {d} {r} {_format_score(s)} {tag}\n" for t, d, r, s in rows)
    return len(rows)


def write_lanes(wh: Warehouse, corpus: str, path: str | Path) -> int:
    """The lanes of `corpus` (models.lane_scores) as one TREC file with the lane id as tag."""
    rows = wh.sql(
        "SELECT l.topic, l.doc_id, l.source_rank, l.score, l.lane FROM models.lane_scores AS l "
        "JOIN models.lane_topics AS t ON t.corpus = l.corpus AND t.topic = l.topic "
        "WHERE l.corpus = ? ORDER BY t.topic_row, l.unit_row, l.source_rank, l.doc_id",
        [corpus],
    )
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{t} Q0 {d} {r} {_format_score(s)} {lane}\n" for t, d, r, s, lane in rows)
    return len(rows)


def lane_receipts(wh: Warehouse, corpus: str) -> dict[str, dict]:
    """Per topic: k_t, fallback, lanes and the documents each admitted, and passage-cache hits and misses."""
    from rankhouse.studies.lanes.passages import latest_receipts  # numpy and Arrow: not for `rankhouse lanes --help`

    _, cache = latest_receipts(wh, corpus)
    lanes: dict[str, dict] = {}
    for topic, lane, documents, admitted, median, mad, threshold in wh.sql(
        "SELECT topic, lane, documents, admitted, median, mad, threshold FROM models.lane_statistics "
        "WHERE corpus = ? ORDER BY topic, lane",
        [corpus],
    ):
        lanes.setdefault(topic, {})[lane] = {
            "documents": documents, "admitted": admitted, "median": median, "mad": mad, "threshold": threshold,
        }  # fmt: skip
    receipts = {}
    for topic, k, fallback, subnarratives in wh.sql(
        "SELECT topic, k, fallback, subnarratives FROM models.lane_topics WHERE corpus = ? ORDER BY topic_row",
        [corpus],
    ):
        topic_cache = cache.get(topic, {"requested": 0, "cache_hits": 0, "cache_misses": 0})
        receipts[topic] = {
            "k": k,
            "fallback": fallback,
            "subnarratives": subnarratives,
            "admitted_per_lane": {lane: entry["admitted"] for lane, entry in lanes.get(topic, {}).items()},
            "lanes": lanes.get(topic, {}),
            "passage_scores": topic_cache["requested"],
            "cache_hits": topic_cache["cache_hits"],
            "cache_misses": topic_cache["cache_misses"],
        }
    return receipts
