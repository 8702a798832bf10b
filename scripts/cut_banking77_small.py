"""Cut tests/fixtures/banking77_small/{train,test}.csv from data/banking77/ (real rows, unchanged).

Twelve intents: the six whose test messages include one that also occurs in training (lowercased,
whitespace-normalised, as seed 004's duplicate rule reads them), then the first six others in
categories.json order. Per intent: the first TRAIN_ROWS training rows and the first TEST_ROWS test
rows in file order, plus every test row of the intent that occurs in training and the training rows
it occurs as. Rows keep their order in the source file and their bytes: the script checks that
writing every source row back with the same CSV dialect gives the source file exactly, so each row
written is the source's record as it was.

    python scripts/cut_banking77_small.py          # rewrites the fixture; prints the counts and hashes
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "banking77"
TARGET = ROOT / "tests" / "fixtures" / "banking77_small"
TRAIN_ROWS, TEST_ROWS, INTENTS = 25, 6, 12


def rows_of(path: Path) -> list[list[str]]:
    """A source file's records (header first), checked to serialise back to the file's exact bytes."""
    raw = path.read_bytes().decode("utf-8")
    rows = list(csv.reader(io.StringIO(raw, newline="")))
    if serialised(rows) != raw:
        raise SystemExit(f"{path}: records do not serialise back to the file; refusing to cut it")
    return rows


def serialised(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue()


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def main() -> None:
    train, test = rows_of(SOURCE / "train.csv"), rows_of(SOURCE / "test.csv")
    header, train, test = train[0], train[1:], test[1:]
    seen = {normalised(text) for text, _ in train}
    duplicated = [intent for text, intent in test if normalised(text) in seen]
    categories = json.loads((SOURCE / "categories.json").read_text())
    intents = list(dict.fromkeys(duplicated))
    intents += [c for c in categories if c not in intents][: INTENTS - len(intents)]
    kept_test = set()
    for intent in intents:
        rows = [i for i, (_, c) in enumerate(test) if c == intent]
        kept_test |= set(rows[:TEST_ROWS]) | {i for i in rows if normalised(test[i][0]) in seen}
    test_texts = {normalised(test[i][0]) for i in kept_test}
    kept_train = set()
    for intent in intents:
        rows = [i for i, (_, c) in enumerate(train) if c == intent]
        kept_train |= set(rows[:TRAIN_ROWS]) | {i for i in rows if normalised(train[i][0]) in test_texts}
    TARGET.mkdir(parents=True, exist_ok=True)
    for name, rows, kept in (("train.csv", train, kept_train), ("test.csv", test, kept_test)):
        data = serialised([header] + [rows[i] for i in sorted(kept)]).encode()
        (TARGET / name).write_bytes(data)
        print(f"{name}: {len(kept)} rows, sha256 {hashlib.sha256(data).hexdigest()}")
    print("intents:", ", ".join(intents))


if __name__ == "__main__":
    main()
