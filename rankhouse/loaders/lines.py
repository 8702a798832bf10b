"""Whitespace-separated text files into a staging table of fields, with exact line numbers, and the
rules of such a format checked in SQL over that table.

The file is read a block of whole lines at a time (READ_BLOCK bytes), so that a file of any size is
never held whole: numpy cuts each block into lines (one copy of them, less the newlines, handed to
DuckDB as an Arrow batch of a stream) and DuckDB splits each line on runs of blanks (spaces, tabs and
carriage returns); a block whose fields are separated everywhere by one space, or one tab, is split on
that byte: the same fields, without a regular expression (`plain_separator`). Blank lines and lines
whose first non-blank character is `#` are skipped (as trec_eval does), unless every line is asked
for; line numbers count every line of the file. This reader accepts any layout and finds every broken
rule; loaders may first try a faster reader on simple files (`simple_separator`) and come here when it
gives up.

Rules every text reader keeps (these and the other loaders): a UTF-8 BOM at the start of a file is not
part of its text (`without_bom`); fields are separated by ASCII blanks only, so a non-ASCII space in a
line is refused (`ascii_blanks`) rather than kept inside a field, as trec_eval would; and a number is
written as trec_eval reads it (`written_number`): no `_` between digits (DuckDB's casts read `1_000` as
1000, trec_eval's strtod as 1) and ASCII only.

A format's rules (`LineFormat`) are `Check`s of one staged line each, in order, and a key no two good
lines may share; `check_staged` raises an InputError naming the first line that breaks one (loaders),
and runfiles.validate_runs evaluates such Checks on every line (the submission validator).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from rankhouse.arrays import int64_array, numpy_array
from rankhouse.errors import InputError
from rankhouse.warehouse import Warehouse

# A whole number within +-2^53 (exact in a DOUBLE), as ranks, grades and chunk numbers must be.
WHOLE = "(TRY_CAST({0} AS DOUBLE) = floor(TRY_CAST({0} AS DOUBLE)) AND abs(TRY_CAST({0} AS DOUBLE)) < 9007199254740992)"

# The UTF-8 byte order mark.
BOM = b"\xef\xbb\xbf"

# Whitespace beyond ASCII (every non-ASCII character for which Python's str.isspace is true: NEL, the
# no-break spaces, the Unicode spaces, the line and paragraph separators). trec_eval splits fields on
# ASCII blanks only and would keep these inside a field; a line that has one is refused.
NON_ASCII_BLANKS = "\x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
BLANK_RULE = "non-ASCII whitespace in the line"
BLANK_DETAIL = "fields are separated by ASCII spaces and tabs"
RE2_BLANKS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in NON_ASCII_BLANKS) + "]"  # the same, in RE2's syntax
TEXT_BLANKS = re.compile(f"[{NON_ASCII_BLANKS}]")
UTF8_BLANKS = re.compile(b"|".join(re.escape(c.encode()) for c in NON_ASCII_BLANKS))  # in UTF-8 bytes

# Bytes of whole lines the general reader stages at a time: its memory, whatever the file's size.
READ_BLOCK = 1 << 24
# A block's separator as staged: none (split on runs of blanks), a space, a tab.
SEPARATORS = (None, " ", "\t")
LINES = pa.schema([("line_no", pa.int64()), ("line", pa.large_string()), ("separator", pa.int8())])

# SQL detail of a repeated key: the line it repeats.
FIRST_LINE = "'first at line ' || CAST(first_line AS VARCHAR)"

# How many hashes repeat, found by sorting them: cheaper than a hash aggregate over string pairs.
# A collision only sends the file to the exact, slower query.
REPEATED_HASHES = """
    SELECT count(*) FILTER (WHERE repeated) FROM (
        SELECT h = lag(h) OVER (ORDER BY h) AS repeated FROM (SELECT hash({key}) AS h FROM {rows})
    )
"""


@dataclass(frozen=True)
class Check:
    """A rule of one line: `broken`, SQL over a staged line (f1 .., nfields), is true where the line breaks it."""

    rule: str
    broken: str
    detail: str  # SQL text shown with the rule


@dataclass(frozen=True)
class LineFormat:
    """The rules of a whitespace-separated format: checks of each line, first broken first, and a unique key."""

    what: str  # what a line is, for "no <what> lines in the file"
    fields: int  # how many fields are staged
    checks: tuple[Check, ...]
    key: str  # SQL over a staged line that passes the checks: no two such lines may share it
    duplicate: str  # the rule a repeated key breaks
    duplicate_detail: str  # SQL text for a repeated key, `first_line` being the line it repeats

    @property
    def rule(self) -> str:
        """SQL: the first rule a staged line breaks, or NULL."""
        return "CASE " + " ".join(f"WHEN {c.broken} THEN {sql_text(c.rule)}" for c in self.checks) + " END"

    @property
    def detail(self) -> str:
        """SQL: the detail of the first rule a staged line breaks, or NULL."""
        return "CASE " + " ".join(f"WHEN {c.broken} THEN {c.detail}" for c in self.checks) + " END"


def without_bom(data: bytes) -> bytes:
    """The one BOM rule of every reader: a file's bytes without the UTF-8 byte order mark it may start with."""
    return data[len(BOM) :] if data.startswith(BOM) else data


def has_non_ascii_blank(data: bytes) -> bool:
    """Whether UTF-8 `data` holds whitespace beyond ASCII (NON_ASCII_BLANKS); at memory speed for ASCII."""
    return not data.isascii() and UTF8_BLANKS.search(data) is not None


def non_ascii_blank(text: str) -> str | None:
    """The first non-ASCII whitespace character of `text` as U+XXXX, or None."""
    found = None if text.isascii() else TEXT_BLANKS.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def ascii_blanks(fields: int) -> Check:
    """The rule that the first `fields` staged fields hold no non-ASCII whitespace (so that every field
    boundary is an ASCII blank, as trec_eval reads them); the detail names the character."""
    text = "concat(" + ", ".join(f"f{i}" for i in range(1, fields + 1)) + ")"
    broken = f"strlen({text}) <> length({text}) AND regexp_matches({text}, '{RE2_BLANKS}')"
    found = f"printf('U+%04X', unicode(regexp_extract({text}, '{RE2_BLANKS}')))"
    return Check(BLANK_RULE, broken, f"{found} || '; {BLANK_DETAIL}'")


def written_number(column: str, name: str) -> tuple[Check, Check]:
    """The rules on how a number field is written, before its value is read: no `_` digit separator
    (DuckDB reads 1_000 as 1000, trec_eval as 1) and no character beyond ASCII (such as the digits of
    other scripts, which neither reads)."""
    return (
        Check(f"{name} has a _ digit separator", f"contains({column}, '_')",
              f"'{name} ' || {column} || '; trec_eval reads the digits before the _ only'"),
        Check(f"{name} has a non-ASCII character", f"strlen({column}) <> length({column})",
              f"'{name} ' || {column} || '; numbers are written in ASCII digits'"),
    )  # fmt: skip


def whole_value(column: str) -> str:
    """SQL: a field's whole number as a BIGINT, NULL if it is not one."""
    return f"CASE WHEN {WHOLE.format(column)} THEN CAST(CAST({column} AS DOUBLE) AS BIGINT) END"


def as_written(column: str, value: str) -> str:
    """SQL: `value`, a number read from a text field, NULL where the field breaks written_number's rules
    (DuckDB reads `1_000` as 1000; it reads no digit beyond ASCII)."""
    return f"CASE WHEN NOT contains({column}, '_') THEN {value} END"


def whole_number(column: str, name: str) -> Check:
    """The rule that a field holds a whole number (`name` is what the field is)."""
    broken = f"NOT coalesce({WHOLE.format(column)}, false)"
    return Check(f"{name} is not a whole number", broken, f"'{name} ' || {column}")


def at_least(column: str, name: str, minimum: int) -> Check:
    """The rule that a whole-number field is at least `minimum`."""
    broken = f"CAST({column} AS DOUBLE) < {minimum}"
    return Check(f"{name} must be at least {minimum}", broken, f"'{name} ' || {column}")


def finite_value(column: str) -> str:
    """SQL: a field's finite number as a DOUBLE, NULL if it is not one."""
    return f"CASE WHEN isfinite(TRY_CAST({column} AS DOUBLE)) THEN TRY_CAST({column} AS DOUBLE) END"


def finite_number(column: str, name: str) -> tuple[Check, Check]:
    """The rules that a field is a number, and a finite one."""
    number = f"TRY_CAST({column} AS DOUBLE)"
    return (
        Check(f"{name} is not a number", f"{number} IS NULL", f"'{name} ' || {column}"),
        Check(f"{name} is NaN or infinite", f"NOT isfinite({number})", f"'{name} ' || {column}"),
    )


def field_count(fields: str, broken: str) -> Check:
    """The rule on how many fields a line has: `broken` is SQL over nfields, `fields` names the fields."""
    return Check(f"expected {len(fields.split())} fields: {fields}", broken, "'found ' || CAST(nfields AS VARCHAR)")


def sql_text(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def check_utf8(path: str | Path, data: bytes, first_line: int = 1) -> None:
    """Raise an InputError naming the first line that is not valid UTF-8 (`data`'s first line being
    `first_line` of the file)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + first_line
        raise InputError(path, line, "not valid UTF-8 text") from None


def _one_blank(data: bytes) -> bytes | None:
    """The one blank (a tab, else a space) that separates fields, or None if the file has both or a CR."""
    separator = b"\t" if b"\t" in data else b" "
    other = b" " if separator == b"\t" else b"\t"
    return None if other in data or b"\r" in data else separator


def simple_separator(data: bytes) -> str | None:
    """The separator of a file that may be simple (one separator, a space or a tab, used singly; no
    blank, comment, indented or CRLF lines), or None if it cannot be.

    Only single-byte scans here (they run at memory speed); a fast reader must still notice doubled
    separators, blank lines and comment lines itself and give up on them.
    """
    separator = _one_blank(data)
    # a BOM still there (the file had two) goes to the general reader, which keeps it as text
    if not data or separator is None or data[:1] in (separator, b"\n", b"#") or data.startswith(BOM):
        return None
    return separator.decode()


class SimpleScan:
    """A file's bytes as a stream for a fast reader, checked as they are read: the rules of
    simple_separator and has_non_ascii_blank, chunk by chunk, so that a file of any size is read once
    and never held whole.

    The first `head` bytes decide the separator (a tab if the head has one, else a space) and the
    layout's start (no BOM left after one is stripped, no blank, newline or `#` first); every chunk
    after that has its lines counted, and is scanned for the other blank, a CR, non-ASCII whitespace or
    a comment line (with the last two bytes of the chunk before: such a blank is at most three bytes).
    After the reader has read it all, `simple` says whether the whole file kept the layout and `lines`
    is count_lines of the bytes without their BOM.

    >>> import io
    >>> scan = SimpleScan(io.BytesIO(b"q1 0 d1 1\\nq1 0 d2 0\\n"), head=4)
    >>> scan.separator, len(scan.read(-1)), scan.simple, scan.lines
    (' ', 20, True, 2)
    """

    def __init__(self, file: BinaryIO, head: int) -> None:
        self._file = file
        self._blanks: set[bytes] = set()
        self._tail = b""
        self._newlines = 0
        self._last = b""
        self._broken = False
        first = self._scanned(file.read(head))
        self._pending = without_bom(first)
        separator = b"\t" if b"\t" in self._pending else b" "
        starts_badly = not self._pending or self._pending[:1] in (separator, b"\n", b"#")
        self._separator = separator
        self.separator = None if starts_badly or self._pending.startswith(BOM) or self._broken else separator.decode()

    def _scanned(self, chunk: bytes) -> bytes:
        # a non-ASCII blank (at most three bytes) may span two chunks; so may a newline before a `#`
        spanning = self._tail + chunk[:2]
        if b"\r" in chunk or has_non_ascii_blank(chunk) or has_non_ascii_blank(spanning):
            self._broken = True
        if b"#" in chunk and b"\n#" in chunk or b"\n#" in spanning:  # a comment line (the head's first line apart)
            self._broken = True
        self._blanks.update(blank for blank in (b" ", b"\t") if blank in chunk)
        self._newlines += newlines(chunk)
        if chunk:
            self._last, self._tail = chunk[-1:], chunk[-2:]
        return chunk

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all that is left if `size` < 0), the head's first."""
        if self._pending:
            if size < 0 or size >= len(self._pending):
                chunk, self._pending = self._pending, b""
                return chunk + (self.read(size - len(chunk)) if size < 0 or size > len(chunk) else b"")
            chunk, self._pending = self._pending[:size], self._pending[size:]
            return chunk
        return self._scanned(self._file.read(size))

    @property
    def closed(self) -> bool:
        """Whether the file is closed (Arrow asks; the scan's owner closes the file)."""
        return self._file.closed

    def close(self) -> None:
        """Nothing: the file is its owner's to close (Arrow closes what it has read)."""

    @property
    def simple(self) -> bool:
        """Whether every byte read kept the simple layout: one blank, no CR, no non-ASCII whitespace."""
        return self.separator is not None and not self._broken and self._blanks <= {self._separator}

    @property
    def lines(self) -> int:
        """Lines read so far, a last line without a newline included (count_lines)."""
        return self._newlines + (self._last not in (b"", b"\n"))


def whole_lines(file: BinaryIO, size: int) -> Iterator[memoryview]:
    """The bytes of `file` in blocks of about `size` bytes read at a time, each ending at a line's end
    (the last one may not), so that each block holds whole lines.

    >>> import io
    >>> [bytes(block) for block in whole_lines(io.BytesIO(b"a b\\nc d\\ne"), 4)]
    [b'a b\\n', b'c d\\n', b'e']
    """
    rest = b""
    while data := file.read(size):
        data = rest + data if rest else data
        cut = data.rfind(b"\n") + 1
        if cut:
            yield memoryview(data)[:cut]
        rest = data[cut:]
    if rest:
        yield memoryview(rest)


def plain_separator(data: bytes) -> str | None:
    """The blank that separates fields singly everywhere (no blank starts or ends a line, no two in a
    row), so that splitting on it is splitting on runs of blanks; None if there is no such blank."""
    separator = _one_blank(data)
    if separator is None or data[:1] == separator or data[-1:] == separator:
        return None
    if separator * 2 in data or b"\n" + separator in data or separator + b"\n" in data:
        return None
    return separator.decode()


def newlines(data: bytes) -> int:
    r"""How many newlines `data` holds: numpy's comparison counts faster than bytes.count
    (docs/performance.md).

    >>> newlines(b"a\nb\n"), newlines(b"")
    (2, 0)
    """
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))


def count_lines(data: bytes) -> int:
    """Lines in a file, a last line without a newline included."""
    return newlines(data) + (bool(data) and not data.endswith(b"\n"))


def line_batch(data: bytes, first_line: int, separator: int) -> pa.RecordBatch:
    """An Arrow batch (line_no, line, separator) with one row per line of `data`, without its newline
    (line_no counts from `first_line`; separator, the same on every row, indexes SEPARATORS)."""
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    starts = np.empty(len(newlines) + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = newlines + 1
    if starts[-1] == len(data):  # the data ends with a newline: no empty last line
        starts = starts[:-1]
    # the bytes without the newlines: line i starts i newlines earlier
    offsets = np.append(starts - np.arange(len(starts)), len(data) - len(newlines))
    lines = pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets), pa.py_buffer(data.replace(b"\n", b"")))
    codes = numpy_array(np.full(len(starts), separator, dtype=np.int8))
    return pa.RecordBatch.from_arrays([line_numbers(len(starts), first_line), lines, codes], schema=LINES)


def line_numbers(count: int, first: int = 1) -> pa.Array:
    """The int64 Arrow array first .. first + count - 1 (int64_array).

    >>> line_numbers(3, first=5).to_pylist()
    [5, 6, 7]
    """
    return int64_array(np.arange(first, first + count, dtype=np.int64))


def stage_fields(
    wh: Warehouse, path: str | Path, data: bytes | BinaryIO, fields: int, table: str, every_line: bool = False
) -> int:
    """Create TEMP `table`(line_no, f1 .. f<fields>, nfields) from the file's bytes, or from a binary
    stream of them read a block of whole lines at a time (READ_BLOCK: a file of any size is never held
    whole); return its row count.

    Fields are text; columns past `fields` are dropped (nfields still counts them), missing ones NULL.
    With `every_line`, blank lines (nfields 0) and `#` lines are staged too. Each block is split on its
    plain_separator where it has one, else on runs of blanks: the same fields either way.
    """
    failed: list[BaseException] = []

    def blocks() -> Iterator[pa.RecordBatch]:
        first_line = 1
        try:
            for view in whole_lines(io.BytesIO(data) if isinstance(data, bytes) else data, READ_BLOCK):
                block = bytes(view)
                check_utf8(path, block, first_line)
                text = without_bom(block) if first_line == 1 else block
                lines = line_batch(text, first_line, SEPARATORS.index(plain_separator(text)))
                yield lines
                first_line += lines.num_rows
        except BaseException as exc:  # raised by stage_fields, not inside DuckDB's scan
            failed.append(exc)

    content = "CASE WHEN separator = 0 THEN trim(line, ' ' || chr(9) || chr(13)) ELSE line END"
    parts = (
        "CASE WHEN line = '' THEN [] WHEN separator = 1 THEN string_split(line, ' ') "
        "WHEN separator = 2 THEN string_split(line, chr(9)) ELSE string_split_regex(line, '[ \\t\\r]+') END"
    )
    kept = "true" if every_line else "line <> '' AND NOT starts_with(line, '#')"
    picks = ", ".join(f"parts[{i}] AS f{i}" for i in range(1, fields + 1))
    with wh.registered("rh_lines", pa.RecordBatchReader.from_batches(LINES, blocks())):
        wh.sql(
            f"""
            CREATE OR REPLACE TEMP TABLE {table} AS
            WITH content AS (
                SELECT line_no, {content} AS line, separator FROM rh_lines
            ),
            split AS (
                SELECT line_no, {parts} AS parts FROM content WHERE {kept}
            )
            SELECT line_no, {picks}, len(parts) AS nfields
            FROM split
            """
        )
    if failed:
        raise failed[0]
    return wh.sql(f"SELECT count(*) FROM {table}")[0][0]


def check_staged(wh: Warehouse, path: str | Path, table: str, fmt: LineFormat) -> None:
    """Raise an InputError for the first staged line that breaks a check or repeats the key, if any,
    counting the other bad lines."""
    good = f"{table} WHERE ({fmt.rule}) IS NULL"
    broken = wh.sql(f"SELECT count(*) FILTER (WHERE ({fmt.rule}) IS NOT NULL) FROM {table}")[0][0]
    if not broken and not wh.sql(REPEATED_HASHES.format(key=fmt.key, rows=good))[0][0]:
        return
    rows = wh.sql(
        f"""
        WITH keyed AS (
            SELECT *, min(line_no) OVER (PARTITION BY {fmt.key}) AS first_line FROM {good}
        ),
        violations AS (
            SELECT line_no, {fmt.rule} AS rule, {fmt.detail} AS detail FROM {table} WHERE ({fmt.rule}) IS NOT NULL
            UNION ALL
            SELECT line_no, {sql_text(fmt.duplicate)}, {fmt.duplicate_detail} FROM keyed WHERE line_no > first_line
        )
        SELECT line_no, rule, detail, count(*) OVER () AS total FROM violations ORDER BY line_no, rule LIMIT 1
        """
    )
    if rows:
        line, rule, detail, total = rows[0]
        if total > 1:
            detail += f"; {total - 1} more bad line{'s' if total > 2 else ''} in this file"
        raise InputError(path, line, rule, detail)


def stage_and_check(wh: Warehouse, path: str | Path, data: bytes | BinaryIO, fmt: LineFormat, table: str) -> int:
    """Stage the file's lines into TEMP `table` and check them (InputError for the first bad one); the line count."""
    rows = stage_fields(wh, path, data, fmt.fields, table)
    if rows == 0:
        raise InputError(path, 1, f"no {fmt.what} lines in the file", "empty, or only blank and # lines")
    check_staged(wh, path, table, fmt)
    return rows


ANY_WHITESPACE = re.compile(r"\s")


def identifier(path: str | Path, line: int, value: object, what: str) -> str:
    """A name: a non-empty string without whitespace (ids, names and classes that go into TREC files and
    keys: the lanes study's topic ids and subnarrative names, the features loaders' ids and intents)."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, line, f"{what} is not a non-empty string", repr(value)[:60])
    if ANY_WHITESPACE.search(value):
        raise InputError(path, line, f"{what} contains whitespace", repr(value))
    return value
