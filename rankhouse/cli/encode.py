"""`rankhouse encode`: MiniLM vectors of a corpus's documents and queries, through the vector cache."""

from __future__ import annotations

from typing import Annotated

import typer

from rankhouse.cli.common import DEFAULT, DbOption, JsonOption, QuietOption, progress_sink


def encode_command(
    corpus: Annotated[str, typer.Option("--corpus", help="The corpus whose documents and queries to encode.")],
    db: DbOption = DEFAULT,
    quiet: QuietOption = False,
    json_lines: JsonOption = False,
) -> None:
    """Encode a corpus with all-MiniLM-L6-v2 into raw.document_vectors and raw.query_vectors.

    Texts already in raw.vector_cache (same text, same encoder) are not encoded again.
    Example: rankhouse encode --corpus banking77
    """
    from rankhouse.encode import Encoder
    from rankhouse.vectors import encode_corpus
    from rankhouse.warehouse import Warehouse

    sink = progress_sink(quiet, json_lines)
    encoder = Encoder()
    with Warehouse(db, say=sink.say) as wh, wh.writing_inputs():
        for kind in ("documents", "queries"):
            sink.say(str(encode_corpus(wh, corpus, encoder, kind, progress=sink.bar(f"encoding {corpus} {kind}"))))
