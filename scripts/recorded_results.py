"""Record every study's outputs once, and check later versions against that record, to the last digit.

    python scripts/recorded_results.py record [--full DIR] [STUDY ...]   # writes tests/recorded/<study>/
    python scripts/recorded_results.py check [--full DIR] [STUDY ...]    # runs the studies again and compares

With --full DIR, every study's complete output directory is also copied to DIR/<study>/ (to compare
large files line by line, e.g. how many ranks an ordering change moved).

Each study runs end to end in a fresh warehouse under a temporary directory (banking77 and
fusion_banking77 share one, as the test suite's fixtures do). `lanes_subset` is the lanes study on
every 8th BANKING77 training message, exactly as tests/test_lanes.py builds it. What is recorded:
results.json and every CSV and run file the study's writer produces (manifest.json and the bundle
copy, which carry paths and times, are left out); a file over 512 KiB is recorded as `<name>.sha256`
(its SHA-256 and line count), so that the record stays small enough to commit. The test suite compares the studies it runs itself
with this record (tests/test_recorded_results.py); `check` covers the two it does not (fusion_scifact
and the full lanes study).
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests" / "recorded"
SUBSET_STEP = 8
TRAIN_SHA = "b06e26ac675513959a63135f11b94ea7786ed02da65db93a5650d8838cbc664b"
STUDIES = {  # study -> (protocol, warehouse group)
    "trec_sample": ("trec_sample.toml", "trec_sample"),
    "banking77": ("banking77.toml", "banking77"),
    "fusion_banking77": ("fusion_banking77.toml", "banking77"),
    "evidence_demo": ("evidence_demo.toml", "evidence_demo"),
    "lanes_subset": (None, "lanes_subset"),
    "fusion_scifact": ("fusion_scifact.toml", "fusion_scifact"),
    "lanes_banking77": ("lanes_banking77.toml", "lanes_banking77"),
}
SKIPPED = {"manifest.json", "bundle"}
LARGE = 512 * 1024  # bytes: larger files are recorded by their SHA-256 and line count


def lanes_subset_protocol(root: Path) -> Path:
    """The lanes protocol over every 8th training message (tests/test_lanes.py's `demo` fixture)."""
    with (ROOT / "data" / "banking77" / "train.csv").open(newline="") as handle:
        train = list(csv.DictReader(handle))[::SUBSET_STEP]
    subset = root / "train_subset.csv"
    with subset.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["text", "category"])
        writer.writerows((r["text"], r["category"]) for r in train)
    text = (ROOT / "studies" / "lanes_banking77.toml").read_text()
    text = text.replace("../data/banking77/train.csv", str(subset))
    text = text.replace(TRAIN_SHA, hashlib.sha256(subset.read_bytes()).hexdigest())
    text = text.replace('"banking77_groups.toml"', json.dumps(str(ROOT / "studies" / "banking77_groups.toml")))
    path = root / "lanes_subset.toml"
    path.write_text(text)
    return path


def run_study(name: str, root: Path) -> Path:
    """Run one study end to end; return its output directory."""
    sys.path.insert(0, str(ROOT))
    from rankhouse.report import write_outputs
    from rankhouse.study import Protocol, Study
    from rankhouse.warehouse import Warehouse

    protocol_file, group = STUDIES[name]
    protocol = lanes_subset_protocol(root) if protocol_file is None else ROOT / "studies" / protocol_file
    out = root / "out" / name
    with Warehouse(root / f"{group}.duckdb") as wh:
        freezes = root / "freezes" / name  # lanes_subset and lanes_banking77 are one study name
        study = Study(Protocol.load(protocol), wh, freezes, say=lambda m: print(f"  {m}", file=sys.stderr))
        write_outputs(study, study.run(), out)
    return out


def outputs(folder: Path) -> dict[str, bytes]:
    """The recorded files of an output directory: relative path -> bytes (a large file as its digest)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or relative.parts[0] in SKIPPED:
            continue
        data = path.read_bytes()
        if len(data) > LARGE and not path.name.endswith(".sha256"):
            lines = data.count(b"\n")
            found[relative.as_posix() + ".sha256"] = f"{hashlib.sha256(data).hexdigest()} {lines} lines\n".encode()
        else:
            found[relative.as_posix()] = data
    return found


def differences(recorded: dict[str, bytes], now: dict[str, bytes]) -> list[str]:
    """Files that differ, are missing or are new; results.json compared value by value."""
    problems = []
    for name in sorted(set(recorded) | set(now)):
        if name not in now:
            problems.append(f"{name}: missing")
        elif name not in recorded:
            problems.append(f"{name}: new")
        elif name.endswith(".json"):
            problems += [f"{name}: {p}" for p in json_differences(json.loads(recorded[name]), json.loads(now[name]))]
        elif recorded[name] != now[name]:
            old, new = recorded[name].decode().splitlines(), now[name].decode().splitlines()
            changed = sum(a != b for a, b in zip(old, new)) + abs(len(old) - len(new))
            problems.append(f"{name}: {changed} of {len(old)} lines differ")
    return problems


def json_differences(old: object, new: object, path: str = "") -> list[str]:
    """Every leaf that differs between two JSON documents, by its path (bit-exact for numbers)."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) | set(new), key=str):
            if key not in new or key not in old:
                found.append(f"{path}/{key}: {'missing' if key not in new else 'new'}")
            else:
                found += json_differences(old[key], new[key], f"{path}/{key}")
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (a, b) in enumerate(zip(old, new)) for p in json_differences(a, b, f"{path}[{i}]")]
    if old != new or type(old) is not type(new):
        return [f"{path}: {old!r} -> {new!r}"]
    return []


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("record", "check"):
        print(__doc__)
        return 2
    full = None
    if len(argv) > 2 and argv[1] == "--full":
        full, argv = Path(argv[2]), [argv[0], *argv[3:]]
    names = argv[1:] or list(STUDIES)
    unknown = sorted(set(names) - set(STUDIES))
    if unknown:
        print(f"unknown studies: {', '.join(unknown)}; known: {', '.join(STUDIES)}")
        return 2
    failed = 0
    with tempfile.TemporaryDirectory(prefix="rankhouse-recorded-") as tmp:
        for name in names:
            print(f"{name}: running", file=sys.stderr)
            folder = run_study(name, Path(tmp))
            if full is not None:
                shutil.rmtree(full / name, ignore_errors=True)
                shutil.copytree(folder, full / name)
            now = outputs(folder)
            target = RECORDED / name
            if argv[0] == "record":
                shutil.rmtree(target, ignore_errors=True)
                for relative, data in now.items():
                    (target / relative).parent.mkdir(parents=True, exist_ok=True)
                    (target / relative).write_bytes(data)
                print(f"{name}: recorded {len(now)} files in {target.relative_to(ROOT)}")
                continue
            problems = differences(outputs(target), now)
            failed += bool(problems)
            print(f"{name}: " + ("identical to the record" if not problems else f"{len(problems)} differences"))
            for problem in problems[:40]:
                print(f"  {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
