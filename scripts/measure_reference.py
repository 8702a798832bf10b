"""Write docs/measures.md, the measure reference, from the measure registry and the metrics models'
headers (rankhouse/catalog_docs/measure_reference.py), or check that it is up to date.

    python scripts/measure_reference.py           # rewrites docs/measures.md
    python scripts/measure_reference.py --check   # exit 1 if docs/measures.md is not what it would write
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rankhouse.catalog_docs.measure_reference import reference  # noqa: E402 - the checkout's rankhouse

PAGE = ROOT / "docs" / "measures.md"


def main(args: list[str]) -> int:
    """Rewrite the page, or with --check say whether it is current.  Example: python scripts/measure_reference.py"""
    text = reference()
    if args == ["--check"]:
        current = PAGE.exists() and PAGE.read_text(encoding="utf-8") == text
        state = "up to date" if current else "out of date: run python scripts/measure_reference.py"
        print(f"{PAGE.relative_to(ROOT)} is {state}")
        return 0 if current else 1
    if args:
        print(__doc__, file=sys.stderr)
        return 2
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
