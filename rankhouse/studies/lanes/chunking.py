"""Seed 002's semantic chunker: a document cut at sentence and paragraph boundaries into chunks of at most
`size` characters (3,500 in the seed) that overlap by at most `overlap` characters (350), deterministic.

The rule, in full (characters are Unicode code points, as DuckDB's substr and Python's str count them):

1. Units. The text is cut after every sentence end and every paragraph break, each unit keeping the
   whitespace that follows it, so that the units put together are the text. A sentence ends at `.`, `!`,
   `?` or `…` (a run of them, then any closing quotes or brackets) followed by whitespace; a paragraph
   breaks at a line break followed by optional spaces and another line break.
2. Long units. A unit longer than `size` is cut into pieces of at most `size` characters, each ending
   after the last whitespace inside the limit (a word boundary), or at the limit where the piece has no
   whitespace.
3. Chunks. The first chunk starts at 0 and takes units while its length stays within `size`. Each next
   chunk starts at the earliest unit start that lies within the last `overlap` characters of the chunk
   before and after that chunk's start (so the overlap is whole units, at most `overlap` characters), and
   from which a chunk can still take the first unit the chunk before did not (so every chunk adds text);
   if no unit start qualifies, it starts where the chunk before ended (no overlap). The last chunk ends at
   the end of the text. A text of at most `size` characters is one chunk; an empty text is one empty chunk.

The fixed-window chunker (chunk i from i * (size - overlap), models/lanes/lane_chunks.sql) stays as the
named alternative `window`; a protocol chooses with `chunker = "semantic"` or `"window"`.

    >>> text = "One. Two. Six."
    >>> [text[s : s + n] for s, n in chunks(text, size=10, overlap=5)]
    ['One. Two. ', 'Two. Six.']
"""

from __future__ import annotations

import re

SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u2019\u201d)\]]*\s+|\n[ \t]*\n\s*")


def units(text: str, size: int) -> list[tuple[int, int]]:
    """The text's units as (start, end) spans: sentences and paragraphs (rule 1), long ones cut (rule 2)."""
    bounds, start = [], 0
    for match in SENTENCE_END.finditer(text):
        if match.end() > start:
            bounds.append((start, match.end()))
            start = match.end()
    if start < len(text) or not bounds:
        bounds.append((start, len(text)))
    spans = []
    for begin, end in bounds:
        while end - begin > size:
            window = text[begin : begin + size]
            cut = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
            piece = cut + 1 if cut > 0 else size
            spans.append((begin, begin + piece))
            begin += piece
        spans.append((begin, end))
    return spans


def chunks(text: str, size: int = 3500, overlap: int = 350) -> list[tuple[int, int]]:
    """The chunks of `text` as (start, length) pairs, in order (rule 3; see the module docstring)."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"a chunk size of at least 1 and an overlap from 0 to below it, not {size}, {overlap}")
    spans = units(text, size)
    found = []
    first = 0  # the index of the chunk's first unit
    while True:
        start = spans[first][0]
        last = first
        while last + 1 < len(spans) and spans[last + 1][1] - start <= size:
            last += 1
        end = spans[last][1]
        found.append((start, end - start))
        if last + 1 >= len(spans):
            return found
        reach = spans[last + 1][1]  # a chunk must take the first unit this one did not
        first = next(
            (i for i in range(first + 1, last + 1) if spans[i][0] >= end - overlap and reach - spans[i][0] <= size),
            last + 1,
        )


def chunks_udf(text: str | None, size: int | None, overlap: int | None) -> list[dict] | None:
    """The SQL function semantic_chunks(text, size, overlap): [{start, length}] with 0-based starts."""
    if text is None or size is None or overlap is None:
        return None
    return [{"start": start, "length": length} for start, length in chunks(text, int(size), int(overlap))]
