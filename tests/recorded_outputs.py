"""Study outputs as recorded in tests/recorded/, and how a later version's outputs are compared with them.

The record was taken from the release before the shared metrics and statistics layer (issue 12), by
`python scripts/recorded_results.py record`: results.json, every CSV and every run file of each study
(a CSV over 512 KiB gzipped, as `<name>.gz`; any other file over 512 KiB as `<name>.sha256`: its SHA-256
and line count).

What must agree:
- every text, identifier, count and integer exactly, and every file recorded by its SHA-256, except the
  run files whose order exact ties decide (CHANGED_BY_EXACT_TIES below);
- every other number to within the rounding error of the old sums (RELATIVE, ABSOLUTE): the shared layer
  adds per-query values and means exactly (the statistics macros), where each study's own copy added
  doubles one by one in whatever order its plan produced them, so the last digits of sums and means
  could move (and moved from one run to the next: the old influence averages did);
- the evidence study's nDCG@5 and what is computed from it to within its old DCG unit (NDCG_UNIT): its
  own copy rounded every DCG term to a whole 1e-12, the shared nDCG model does not round.
What is left out: the protocol's SHA-256 (the protocols now name their measures; a test checks it is the
protocol file's), the passage scorer's times and the files added since (ADDED).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from pathlib import Path

RECORDED = Path(__file__).parent / "recorded"
SKIPPED = {"manifest.json", "bundle"}  # paths and times
# Outputs added after the record (issue 16), each tested on its own (tests/report/test_report.py): what the
# report needs besides the writers' files (provenance.json: paths, times and versions, too) and the
# report itself.
ADDED = {
    "provenance.json",
    "paired_differences.csv",
    "report.html",
    "report.md",
    "figures",
    "metadata.json",
}  # the last two: the lanes study's (issue 36: seed 002's metadata and classification)
LARGE = 512 * 1024  # bytes: larger files are recorded by their SHA-256 and line count
# A naive sum of n doubles can be off by n units in the last place: the old means over 3,080 queries by up
# to 3,080 * 2^-53 = 3.4e-13 of their value (seen: BM25's P@5, 0.7033766233766198 for 10832 / 15400).
RELATIVE, ABSOLUTE = 4e-13, 2e-15
NDCG_UNIT = 1e-11  # the evidence study's old nDCG@5: five DCG terms and five ideal ones, each to 1e-12
# Not results: when the scoring ran, its time, and the encoder's work, which the warehouse's shared vector
# cache saves when another study of the warehouse encoded the same texts first (issue 34); when a fusion
# study's freeze was made (issue 36).
IGNORED = {"/protocol_sha256", "/passage_scoring/scored_at", "/passage_scoring/seconds",
           "/passage_scoring/texts_encoded", "/passage_scoring/model_batches", "/reference/frozen_at"}  # fmt: skip
# What exact tie keys changed (issue 12), by study: run files whose order of mathematically equal scores,
# or whose scores' last digit, moved; and the systems whose measures moved with their order (Fisher's
# equal products reorder candidates from rank 3 down). Their values are not compared; the tie tests
# (tests/measures/test_exact_ties.py) check the new orders.
CHANGED_BY_EXACT_TIES: dict[str, dict[str, set[str]]] = {
    "fusion_banking77": {"files": {"runs/fisher.run", "runs/rrf.run"}, "systems": {"fisher"}},
    "fusion_scifact": {"files": {"runs/fisher.run", "runs/rrf.run"}, "systems": {"fisher"}},
    "lanes_subset": {"files": {"runs/combo.run", "runs/breadth.run"}, "systems": set()},
    "lanes_banking77": {"files": {"runs/combo.run", "runs/breadth.run"}, "systems": set()},
}


def outputs(folder: Path) -> dict[str, bytes]:
    """The recorded files of an output directory: relative path -> bytes (a large file as its digest)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or relative.parts[0] in SKIPPED | ADDED:
            continue
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            found[relative.as_posix().removesuffix(".gz")] = gzip.decompress(data)
        elif len(data) > LARGE and path.suffix == ".csv":
            found[relative.as_posix()] = data  # written gzipped by `store`
        elif len(data) > LARGE and not path.name.endswith(".sha256"):
            lines = data.count(b"\n")
            found[relative.as_posix() + ".sha256"] = f"{hashlib.sha256(data).hexdigest()} {lines} lines\n".encode()
        else:
            found[relative.as_posix()] = data
    return found


def store(files: dict[str, bytes], folder: Path) -> None:
    """Write a record (as `outputs` reads it back): a CSV over LARGE gzipped, the rest as they are."""
    for name, data in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if len(data) > LARGE and name.endswith(".csv"):
            target.with_name(target.name + ".gz").write_bytes(gzip.compress(data, mtime=0))
        else:
            target.write_bytes(data)


def recorded(study: str) -> dict[str, bytes]:
    """The record of one study."""
    return outputs(RECORDED / study)


def _close(old: object, new: object, where: str) -> bool:
    if isinstance(old, bool) or isinstance(new, bool) or not isinstance(old, (int, float)):
        return old == new and type(old) is type(new)
    if not isinstance(new, (int, float)) or type(old) is not type(new):
        return False
    if isinstance(old, int) or old == new:
        return old == new
    tolerance = NDCG_UNIT if "nDCG@5" in where or "ndcg5" in where else ABSOLUTE
    return math.isclose(old, new, rel_tol=RELATIVE, abs_tol=tolerance)


def json_differences(
    old: object, new: object, path: str = "", tolerant: bool = True, skipped: frozenset[str] = frozenset()
) -> list[str]:
    """Every leaf that differs between two JSON documents, by its path (numbers as _close says, or
    exactly); leaves under a key naming one of the `skipped` systems (or a contrast with one) are not
    compared."""
    if tolerant and (
        path in IGNORED
        or any(part.split(" - ")[0] in skipped or part.split(" - ")[-1] in skipped for part in path.split("/"))
    ):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) | set(new), key=str):
            if key not in new or key not in old:
                found.append(f"{path}/{key}: {'missing' if key not in new else 'new'}")
            else:
                found += json_differences(old[key], new[key], f"{path}/{key}", tolerant, skipped)
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        pairs = enumerate(zip(old, new))
        return [p for i, (a, b) in pairs for p in json_differences(a, b, f"{path}[{i}]", tolerant, skipped)]
    same = _close(old, new, path) if tolerant else (old == new and type(old) is type(new))
    return [] if same else [f"{path}: {old!r} -> {new!r}"]


def _cell(text: str) -> object:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def csv_differences(
    name: str, old: bytes, new: bytes, tolerant: bool = True, skipped: frozenset[str] = frozenset()
) -> list[str]:
    """Cells that differ between two CSV files of the same shape (numbers as _close says, or exactly);
    rows whose first cell is one of the `skipped` systems are not compared."""
    import csv
    import io

    a = list(csv.reader(io.StringIO(old.decode())))
    b = list(csv.reader(io.StringIO(new.decode())))
    if len(a) != len(b) or (a and a[0] != b[0]):
        return [f"{name}: {len(a)} rows with columns {a[:1]}, now {len(b)} rows with {b[:1]}"]
    found = []
    for number, (x, y) in enumerate(zip(a, b), start=1):
        if tolerant and x and x[0] in skipped and x[0] == (y[0] if y else None):
            continue
        for column, u, v in zip(a[0], x, y):
            if u != v and (not tolerant or not _close(_cell(u), _cell(v), f"{name}:{column}")):
                found.append(f"{name}:{number}: {column} {u} -> {v}")
    return found


def differences(study: str, old: dict[str, bytes], new: dict[str, bytes], tolerant: bool = True) -> list[str]:
    """What differs between a study's record and its outputs now (see the module's docstring); `tolerant`
    False compares every byte and number exactly."""
    problems = []
    ties = CHANGED_BY_EXACT_TIES.get(study, {}) if tolerant else {}
    files, systems = ties.get("files", set()), frozenset(ties.get("systems", set()))
    for name in sorted(set(old) | set(new)):
        if name not in new or name not in old:
            problems.append(f"{name}: {'missing' if name not in new else 'new'}")
        elif old[name] == new[name] or name.removesuffix(".sha256") in files:
            continue
        elif name.endswith(".json"):
            found = json_differences(json.loads(old[name]), json.loads(new[name]), "", tolerant, systems)
            problems += [f"{name}: {p}" for p in found]
        elif name.endswith(".csv"):
            problems += csv_differences(name, old[name], new[name], tolerant, systems)
        else:
            problems.append(f"{name}: differs")
    return problems
