"""Run files you can submit (seed 002, "Provenance and validation"): export, validation, manifest.

export    `write_orderings` writes each ordering of models.lane_orderings as a six-field TREC file,
          `topic Q0 docno rank score tag`, topics in file order and ranks 1..k_t; the score is k_t + 1 - rank,
          so that trec_eval (score descending, ties by docno) reads the file in exactly the ordering's order.
          `write_lanes` writes the lanes a study admitted from (tag = lane id), loadable with `lanes.runs`.
validate  `validate_runs` checks what the seed lists, per file: six whitespace-separated fields on every
          line (no blank or comment lines) with `Q0` second; ranks that start at 1 for each topic and go up
          by one (a topic's lines together); finite scores that never increase within a topic; no
          (topic, docno) pair twice; document ids matching the allowed pattern; and across the files
          (the variants of one submission): the same topics and the same topic-document rows. Two
          submission rules are checked too: one run tag per file, and a different tag in each file.
manifest  `write_manifest`: the SHA-256 of every input and output file, and per-topic receipts.

    >>> problems = validate_runs(["combo.run", "breadth.run"], doc_id_pattern=r"shard_\\S+")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rankhouse.errors import RankhouseError
from rankhouse.loaders.sources import sha256_file
from rankhouse.warehouse import Warehouse

METHODS = ("combo", "breadth", "narrative")
FIELDS = "topic Q0 docno rank score tag"


@dataclass(frozen=True)
class RunProblem:
    """A broken rule: the file, the line (0: the file as a whole) and the rule, with details."""

    path: str
    line: int
    rule: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}" + (f" ({self.detail})" if self.detail else "")


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


# -- validation ---------------------------------------------------------------------------------------
@dataclass
class _Parsed:
    topics: dict[str, list[str]]  # topic -> documents in file order
    tag: str | None


def _check_file(path: Path, pattern: re.Pattern | None) -> tuple[list[RunProblem], _Parsed]:
    shown = str(path)
    problems: list[RunProblem] = []
    parsed = _Parsed({}, None)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [RunProblem(shown, 0, "cannot read the file", exc.strerror or str(exc))], parsed
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [RunProblem(shown, data.count(b"\n", 0, exc.start) + 1, "not valid UTF-8 text")], parsed
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return [RunProblem(shown, 0, "no lines in the file")], parsed
    seen: dict[tuple[str, str], int] = {}
    finished: set[str] = set()
    current, last_rank, last_score = None, 0, math.inf
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            problems.append(RunProblem(shown, number, "blank line"))
            continue
        if len(fields) != 6:
            problems.append(RunProblem(shown, number, f"expected 6 fields: {FIELDS}", f"found {len(fields)}"))
            continue
        topic, q0, docno, rank_text, score_text, tag = fields
        if q0 != "Q0":
            problems.append(RunProblem(shown, number, "the second field must be Q0", q0))
        if parsed.tag is None:
            parsed.tag = tag
        elif tag != parsed.tag:
            problems.append(
                RunProblem(shown, number, "run tag differs from the file's first", f"{tag}, not {parsed.tag}")
            )
        if topic != current:
            if topic in finished:
                problems.append(RunProblem(shown, number, "topic appears again after other topics", topic))
            if current is not None:
                finished.add(current)
            current, last_rank, last_score = topic, 0, math.inf
        try:
            rank = int(rank_text)
        except ValueError:
            problems.append(RunProblem(shown, number, "rank is not a whole number", rank_text))
            rank = None
        if rank is not None and rank != last_rank + 1:
            detail = f"rank {rank} after {last_rank}" if last_rank else f"first rank {rank}"
            problems.append(RunProblem(shown, number, "ranks must start at 1 for each topic and go up by 1", detail))
        last_rank = rank if rank is not None else last_rank + 1
        try:
            score = float(score_text)
        except ValueError:
            problems.append(RunProblem(shown, number, "score is not a number", score_text))
            score = None
        if score is not None:
            if not math.isfinite(score):
                problems.append(RunProblem(shown, number, "score is NaN or infinite", score_text))
            elif score > last_score:
                problems.append(RunProblem(shown, number, "score increases within the topic",
                                           f"{score_text} after {last_score!r}"))  # fmt: skip
            else:
                last_score = score
        if (topic, docno) in seen:
            problems.append(RunProblem(shown, number, "duplicate topic-document pair",
                                       f"{topic} {docno}, first at line {seen[topic, docno]}"))  # fmt: skip
        else:
            seen[topic, docno] = number
            parsed.topics.setdefault(topic, []).append(docno)
        if pattern is not None and not pattern.fullmatch(docno):
            problems.append(RunProblem(shown, number, "document id does not match the allowed pattern",
                                       f"{docno!r} against {pattern.pattern!r}"))  # fmt: skip
    return problems, parsed


def validate_runs(paths: Sequence[str | Path], doc_id_pattern: str | None = None) -> list[RunProblem]:
    """Every broken rule of the run files, each file on its own and across them; empty when all is well.

    `doc_id_pattern` is a Python regular expression a whole document id must match (None: any id).
    """
    if not paths:
        raise RankhouseError("no run files to validate")
    try:
        pattern = re.compile(doc_id_pattern) if doc_id_pattern else None
    except re.error as exc:
        raise RankhouseError(f"the document id pattern {doc_id_pattern!r} is not a regular expression: {exc}") from None
    problems: list[RunProblem] = []
    parsed: list[tuple[Path, _Parsed]] = []
    for path in map(Path, paths):
        found, result = _check_file(path, pattern)
        problems += found
        parsed.append((path, result))
    first_path, first = parsed[0]
    tags: dict[str, Path] = {}
    for path, result in parsed:
        if result.tag is not None:
            if result.tag in tags and tags[result.tag] != path:
                problems.append(RunProblem(str(path), 0, "run tag also used by another file",
                                           f"{result.tag} in {tags[result.tag]}"))  # fmt: skip
            tags.setdefault(result.tag, path)
        if path is first_path:
            continue
        missing = sorted(set(first.topics) - set(result.topics))
        extra = sorted(set(result.topics) - set(first.topics))
        if missing or extra:
            problems.append(RunProblem(str(path), 0, f"topics differ from {first_path}",
                                       f"missing {missing[:5]}, extra {extra[:5]}"))  # fmt: skip
        for topic in sorted(set(first.topics) & set(result.topics)):
            ours, theirs = result.topics[topic], first.topics[topic]
            if len(ours) != len(theirs) or set(ours) != set(theirs):
                problems.append(RunProblem(str(path), 0, f"rows differ from {first_path}",
                                           f"topic {topic}: {len(ours)} documents, {len(theirs)} there"
                                           + ("" if len(ours) != len(theirs) else ", not the same ones")))  # fmt: skip
    return problems


def summary(paths: Sequence[str | Path]) -> dict:
    """Topics and rows per file (of files that validate)."""
    out = {}
    for path in map(Path, paths):
        topics = set()
        rows = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            topics.add(line.split()[0])
            rows += 1
        out[path.name] = {"topics": len(topics), "rows": rows}
    return out


# -- manifest ------------------------------------------------------------------------------------------
def lane_receipts(wh: Warehouse, corpus: str) -> dict[str, dict]:
    """Per topic: k_t, fallback, lanes and the documents each admitted, and passage-cache hits and misses."""
    from rankhouse.lanes import latest_receipts

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


def write_manifest(path: str | Path, *, inputs: dict[str, str | Path], outputs: Sequence[str | Path],
                   extra: dict | None = None) -> Path:  # fmt: skip
    """A JSON manifest: {inputs: {key: {path, sha256}}, outputs: {name: {sha256, bytes}}, ...extra}."""
    path = Path(path)
    document = {
        "inputs": {key: {"path": str(p), "sha256": sha256_file(p)} for key, p in sorted(inputs.items())},
        "outputs": {
            Path(p).relative_to(path.parent).as_posix() if Path(p).is_relative_to(path.parent) else str(p): {
                "sha256": sha256_file(p),
                "bytes": Path(p).stat().st_size,
            }
            for p in outputs
            if Path(p).resolve() != path.resolve()
        },  # fmt: skip
        **(extra or {}),
    }
    path.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path
