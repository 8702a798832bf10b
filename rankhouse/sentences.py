"""The first sentence of a description or docstring: what `rankhouse --help`, `models list` and the
catalog docs show as a summary."""

from __future__ import annotations

import re

# a full stop that ends a sentence: followed by white space, not the end of an abbreviation
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bcf)(?<!\bvs)(?<!\betc)(?<!\beq)\.\s")


def first_sentence(text: str) -> str:
    """The first sentence of `text`, its lines joined, without the final full stop.

    >>> first_sentence("The class (e.g. card_arrival) of a document. Its grade ...")
    'The class (e.g. card_arrival) of a document'
    >>> first_sentence("Evaluate runs against qrels (computed on\\n    --engine: duckdb).  Example: rankhouse eval")
    'Evaluate runs against qrels (computed on --engine: duckdb)'
    """
    joined = " ".join(text.split())
    found = _SENTENCE_END.search(joined + " ")
    return (joined[: found.start()] if found else joined).rstrip(".")
