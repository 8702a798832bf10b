"""Record every study's outputs once, and check later versions against that record.

    python scripts/recorded_results.py record [--full DIR] [STUDY ...]   # writes tests/recorded/<study>/
    python scripts/recorded_results.py check [--full DIR] [--exact] [STUDY ...]   # runs them again, compares

With --full DIR, every study's complete output directory is also copied to DIR/<study>/ (to compare
large files line by line, e.g. how many ranks an ordering change moved).

Each study runs end to end in a fresh warehouse under a temporary directory (banking77 and
fusion_banking77 share one, as the test suite's fixtures do). `lanes_subset` is the lanes study on
every 8th BANKING77 training message, exactly as tests/conftest.py builds it. What is recorded:
results.json and every CSV and run file the study's writer produces; tests/recorded_outputs.py says
what is left out, what must agree and to how many digits (--exact: every byte and number exactly).
The test suite compares the studies it runs itself with this record (tests/studies/test_recorded_results.py);
`check` covers the two it does not (fusion_scifact and the full lanes study).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import recorded_outputs  # noqa: E402 - the record's format and comparison, shared with the test suite

RECORDED = recorded_outputs.RECORDED
STUDIES = {  # study -> (protocol, warehouse group)
    "trec_sample": ("trec_sample.toml", "trec_sample"),
    "banking77": ("banking77.toml", "banking77"),
    "fusion_banking77": ("fusion_banking77.toml", "banking77"),
    "evidence_demo": ("evidence_demo.toml", "evidence_demo"),
    "lanes_subset": (None, "lanes_subset"),
    "fusion_scifact": ("fusion_scifact.toml", "fusion_scifact"),
    "lanes_banking77": ("lanes_banking77.toml", "lanes_banking77"),
}


def lanes_subset_protocol(root: Path) -> Path:
    """The lanes protocol over every 8th training message, as the test suite builds it (tests/conftest.py)."""
    from conftest import lanes_subset_protocol as build

    return build(root)[0]


def run_study(name: str, root: Path) -> Path:
    """Run one study end to end; return its output directory."""
    sys.path.insert(0, str(ROOT))
    from rankhouse.progress import Progress
    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import write_outputs
    from rankhouse.warehouse import Warehouse

    class Notes(Progress):
        """The study's notes, indented, on stderr (no model lines)."""

        def say(self, message: str) -> None:
            print(f"  {message}", file=sys.stderr)

    protocol_file, group = STUDIES[name]
    protocol = lanes_subset_protocol(root) if protocol_file is None else ROOT / "studies" / protocol_file
    out = root / "out" / name
    with Warehouse(root / f"{group}.duckdb") as wh:
        freezes = root / "freezes" / name  # lanes_subset and lanes_banking77 are one study name
        study = Study(Protocol.load(protocol), wh, freezes, progress=Notes())
        write_outputs(study, study.run(), out)
    return out


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("record", "check"):
        print(__doc__)
        return 2
    full = None
    if len(argv) > 2 and argv[1] == "--full":
        full, argv = Path(argv[2]), [argv[0], *argv[3:]]
    exact = "--exact" in argv
    argv = [a for a in argv if a != "--exact"]
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
            now = recorded_outputs.outputs(folder)
            target = RECORDED / name
            if argv[0] == "record":
                shutil.rmtree(target, ignore_errors=True)
                recorded_outputs.store(now, target)
                print(f"{name}: recorded {len(now)} files in {target.relative_to(ROOT)}")
                continue
            problems = recorded_outputs.differences(name, recorded_outputs.outputs(target), now, tolerant=not exact)
            failed += bool(problems)
            print(f"{name}: " + ("identical to the record" if not problems else f"{len(problems)} differences"))
            for problem in problems[:40]:
                print(f"  {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
