"""SciFact's CSV exports and the BEIR format (corpus.jsonl, queries.jsonl, qrels TSV).

SciFact (data/scifact, see its SOURCE.md):
documents - corpus_train.csv, `doc_id,title,abstract,structured`; the abstract is a NumPy printout of a
            list of string literals, read token by token and never evaluated; text = title + " " +
            the sentences joined by single spaces, kept otherwise as written.
queries   - claims_*.csv, `id,claim,...`, one row per (claim, evidence); one query per distinct id, in
            order of first appearance.
BEIR, for users' own collections:
corpus    - one JSON object per line: `_id`, `text`, optional `title` (text = title + " " + text).
queries   - one JSON object per line: `_id`, `text` (other keys are ignored).
qrels     - a TSV with the header `query-id<TAB>corpus-id<TAB>score` and an integer score; into the
            labels file's `qrels` table (iter '0'), replacing the qrels there as TREC qrels do.

Ids are the files' own; row_index is the 0-based position of the document or query in its file.
Rules, each reported with the file, the line and the rule, and nothing loaded: UTF-8; well-formed CSV
or JSON; the expected header and field count; a non-empty id and text; no repeated id (and for claims,
one text per id); 3 fields and an integer score per qrels line, no non-ASCII whitespace in it, no
(query, doc) pair judged twice; at least one row. Blank lines in JSONL and TSV files are skipped; line
numbers count every line; a leading UTF-8 BOM is stripped.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa

from rankhouse.errors import InputError
from rankhouse.loaders.lines import BLANK_RULE, check_utf8, non_ascii_blank, without_bom
from rankhouse.loaders.sources import (
    LoadResult,
    loaded_sha,
    read_file,
    record_source,
    replace_named_rows,
    sha256_bytes,
    writes_inputs,
)
from rankhouse.warehouse import Warehouse

SCIFACT = "scifact"
CORPUS_HEADER = ["doc_id", "title", "abstract", "structured"]
CLAIMS_HEADER = ["id", "claim"]  # the first two columns; the rest (evidence) is not read
QRELS_HEADER = "query-id\tcorpus-id\tscore"
INTEGER = re.compile(r"[+-]?[0-9]{1,18}")  # fits a BIGINT
SKIPPED_TOKENS = {tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER}
ABSTRACT_RULE = "abstract is not a [...] of string literals"

Text = tuple[int, str, str]  # (line, id, text) of one document or query
Judgment = tuple[int, str, str, int]  # (line, query id, doc id, score)


# -- reading ----------------------------------------------------------------------------------------
def _decode(path: str | Path, data: bytes) -> str:
    """The file's text (without a leading BOM), or an InputError naming the first line that is not UTF-8,
    or the empty file."""
    check_utf8(path, data)
    data = without_bom(data)
    if not data.strip():
        raise InputError(path, 1, "empty file")
    return data.decode("utf-8")


def _csv_records(path: str | Path, text: str, header: list[str], exact: bool) -> Iterator[tuple[int, list[str]]]:
    """(first line, fields) per data row of an RFC 4180 CSV, after checking its header.

    `exact`: the header is `header`; otherwise it starts with `header`. Every row has the header's width.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        found = next(reader, [])
        if (found if exact else found[: len(header)]) != header:
            expected = ",".join(header) + ("" if exact else ",...")
            raise InputError(path, 1, f"expected the header {expected}", f"found {','.join(found)}")
        start = reader.line_num + 1
        for fields in reader:
            if len(fields) != len(found):
                rule = f"expected {len(found)} fields: {','.join(found)}"
                raise InputError(path, start, rule, f"found {len(fields)}")
            yield start, fields
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(path, reader.line_num, "malformed CSV", str(exc)) from None


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for every non-blank line, without its line end."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line.rstrip("\r")


def _at_least_one(path: str | Path, rows: list, line: int, what: str) -> list:
    """`rows`, or an InputError if there are none."""
    if not rows:
        raise InputError(path, line, f"no {what} in the file")
    return rows


def _unique(path: str | Path, rows: list[Text], what: str) -> list[Text]:
    """`rows`, or an InputError at the first repeated id."""
    first: dict[str, int] = {}
    for line, key, _ in rows:
        if key in first:
            raise InputError(path, line, f"duplicate {what}", f"{key!r}, first at line {first[key]}")
        first[key] = line
    return rows


# -- SciFact ----------------------------------------------------------------------------------------
def abstract_sentences(path: str | Path, line: int, abstract: str) -> list[str]:
    """The sentences of a NumPy printout of string literals, read without evaluating any code.

    Only `[`, string literals, line breaks and `]` may appear; `line` is the line the field starts on.

    >>> abstract_sentences("corpus.csv", 2, "['One.'\\n 'Two.']")
    ['One.', 'Two.']
    """
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(abstract).readline) if _significant(t)]
    except (tokenize.TokenError, SyntaxError) as exc:
        row = exc.lineno if isinstance(exc, SyntaxError) else exc.args[1][0]
        row = min(max(row or 1, 1), abstract.count("\n") + 1)  # the tokenizer may point past the end
        raise InputError(path, line + row - 1, ABSTRACT_RULE, exc.args[0]) from None
    if len(tokens) < 2 or tokens[0].string != "[" or tokens[-1].string != "]" or tokens[-1].type != tokenize.OP:
        raise InputError(path, line, ABSTRACT_RULE, "expected [ ... ] around the literals")
    return [_literal(path, line, token) for token in tokens[1:-1]]


def _significant(token: tokenize.TokenInfo) -> bool:
    """Not a line break or end marker, nor the blank that Python 3.11 reports before a bad token."""
    return token.type not in SKIPPED_TOKENS and (token.type != tokenize.ERRORTOKEN or bool(token.string.strip()))


def _literal(path: str | Path, line: int, token: tokenize.TokenInfo) -> str:
    """The value of one STRING token that is a plain str literal, or an InputError at its line."""
    value = None
    if token.type == tokenize.STRING:
        try:
            value = ast.literal_eval(token.string)  # one literal only: nothing here can run code
        except (ValueError, SyntaxError):
            pass
    if not isinstance(value, str):
        found = "an unterminated string" if token.string in ("'", '"') else repr(token.string)
        raise InputError(path, line + token.start[0] - 1, ABSTRACT_RULE, f"found {found}")
    return value


def _scifact_documents(path: str | Path, text: str) -> list[Text]:
    """(line, doc_id, title + " " + sentences) per row of corpus_train.csv, checked."""
    rows = []
    for line, (doc_id, title, abstract, _) in _csv_records(path, text, CORPUS_HEADER, exact=True):
        if not doc_id.strip():
            raise InputError(path, line, "empty doc_id")
        sentences = abstract_sentences(path, line + doc_id.count("\n") + title.count("\n"), abstract)
        body = " ".join(part for part in (title, " ".join(sentences)) if part)
        if not body.strip():
            raise InputError(path, line, "empty title and abstract", f"doc_id {doc_id}")
        rows.append((line, doc_id, body))
    return _unique(path, _at_least_one(path, rows, 2, "documents"), "doc_id")


def _scifact_queries(path: str | Path, text: str) -> list[Text]:
    """(line, claim id, claim) per distinct claim id of a claims CSV, in order of first appearance."""
    claims: dict[str, Text] = {}
    for line, (qid, claim, *_) in _csv_records(path, text, CLAIMS_HEADER, exact=False):
        if not qid.strip() or not claim.strip():
            raise InputError(path, line, "empty id or claim")
        first = claims.setdefault(qid, (line, qid, claim))
        if first[2] != claim:
            raise InputError(
                path, line, "claim id repeated with a different claim", f"id {qid}, first at line {first[0]}"
            )
    return _at_least_one(path, list(claims.values()), 2, "claims")


# -- BEIR -------------------------------------------------------------------------------------------
def _json_objects(path: str | Path, text: str) -> Iterator[tuple[int, dict]]:
    """(line, object) per non-blank line of a JSONL file."""
    for line, raw in _lines(text):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(path, line, "malformed JSON", exc.msg) from None
        if not isinstance(value, dict):
            raise InputError(path, line, "expected a JSON object", f"found {type(value).__name__}")
        yield line, value


def _string(path: str | Path, line: int, record: dict, key: str, required: bool = True) -> str:
    """`record[key]` as a string ('' if absent and not required); ids may also be JSON integers."""
    value = record.get(key)
    if value is None:
        if required:
            raise InputError(path, line, f"missing {key}")
        return ""
    if key == "_id" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(path, line, f"{key} is not a string", f"found {json.dumps(value)[:40]}")
    return value


def _beir_documents(path: str | Path, text: str) -> list[Text]:
    """(line, _id, title + " " + text) per line of a corpus.jsonl, checked."""
    rows = []
    for line, record in _json_objects(path, text):
        doc_id, body = _string(path, line, record, "_id"), _string(path, line, record, "text")
        title = _string(path, line, record, "title", required=False)
        body = f"{title} {body}" if title and body else title or body
        if not doc_id.strip() or not body.strip():
            raise InputError(path, line, "empty _id or text")
        rows.append((line, doc_id, body))
    return _unique(path, _at_least_one(path, rows, 1, "documents"), "_id")


def _beir_queries(path: str | Path, text: str) -> list[Text]:
    """(line, _id, text) per line of a queries.jsonl, checked."""
    rows = []
    for line, record in _json_objects(path, text):
        qid, body = _string(path, line, record, "_id"), _string(path, line, record, "text")
        if not qid.strip() or not body.strip():
            raise InputError(path, line, "empty _id or text")
        rows.append((line, qid, body))
    return _unique(path, _at_least_one(path, rows, 1, "queries"), "_id")


def _beir_qrels(path: str | Path, text: str) -> list[Judgment]:
    """(line, query-id, corpus-id, score) per line of a BEIR qrels TSV, checked."""
    lines = _lines(text)
    header = next(lines, (1, ""))
    if header != (1, QRELS_HEADER):
        raise InputError(path, 1, "expected the header query-id<TAB>corpus-id<TAB>score", f"found {header[1]!r}")
    rows, first = [], {}
    for line, raw in lines:
        rows.append(_judgment(path, line, raw))
        pair = rows[-1][1:3]
        if pair in first:
            raise InputError(path, line, "document judged twice for this query", f"{pair}, first at line {first[pair]}")
        first[pair] = line
    return _at_least_one(path, rows, 2, "qrels lines")


def _judgment(path: str | Path, line: int, raw: str) -> Judgment:
    """One qrels line, checked: no non-ASCII whitespace, three tab-separated fields, non-empty ids, an
    integer score."""
    blank = non_ascii_blank(raw)
    if blank:
        raise InputError(path, line, BLANK_RULE, f"{blank}; fields are separated by tabs")
    fields = raw.split("\t")
    if len(fields) != 3:
        raise InputError(path, line, "expected 3 fields: query-id corpus-id score", f"found {len(fields)}")
    qid, doc_id, score = (field.strip() for field in fields)
    if not qid or not doc_id:
        raise InputError(path, line, "empty query-id or corpus-id")
    if not INTEGER.fullmatch(score):
        raise InputError(path, line, "score is not an integer", f"score {score!r}")
    return line, qid, doc_id, int(score)


# -- loading ----------------------------------------------------------------------------------------
def _load_texts(
    wh: Warehouse, path: str | Path, name: str, table: str, parse: Callable[[str | Path, str], list[Text]], loader: str
) -> LoadResult:
    """Replace `table`'s rows of corpus `name` by the file's, in one transaction (a no-op for the same bytes)."""
    data = read_file(path)
    sha = sha256_bytes(data)
    previous = loaded_sha(wh, "meta.sources", table, name)
    if previous == sha:
        return LoadResult(table, name, str(path), sha, 0, "unchanged")
    rows = parse(path, _decode(path, data))
    columns = {"corpus": [name] * len(rows), "id": [r[1] for r in rows], "row_index": list(range(len(rows)))}
    texts = pa.table({**columns, "text": [r[2] for r in rows]})
    replace_named_rows(wh, table, "corpus", name, texts, "meta.sources", table, path, sha, loader)
    return LoadResult(table, name, str(path), sha, len(rows), "replaced" if previous else "loaded")


def _beir_name(path: str | Path) -> str:
    """BEIR keeps a collection in a directory named after it (scifact/corpus.jsonl): that name, else the stem."""
    return Path(path).resolve().parent.name or Path(path).stem


@writes_inputs
def load_scifact_documents(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """SciFact's corpus_train.csv as documents of corpus `name` (default 'scifact').

    Example: load_scifact_documents(wh, "data/scifact/corpus_train.csv")
    """
    return _load_texts(wh, path, name or SCIFACT, "raw.documents", _scifact_documents, "scifact.documents")


@writes_inputs
def load_scifact_queries(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """SciFact's claims (e.g. claims_validation.csv) as queries of corpus `name` (default 'scifact').

    Example: load_scifact_queries(wh, "data/scifact/claims_validation.csv")
    """
    return _load_texts(wh, path, name or SCIFACT, "raw.queries", _scifact_queries, "scifact.queries")


@writes_inputs
def load_beir_corpus(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A BEIR corpus.jsonl as documents of corpus `name` (default: the file's directory name).

    Example: load_beir_corpus(wh, "beir/nfcorpus/corpus.jsonl")  # corpus 'nfcorpus'
    """
    return _load_texts(wh, path, name or _beir_name(path), "raw.documents", _beir_documents, "beir.corpus")


@writes_inputs
def load_beir_queries(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A BEIR queries.jsonl as queries of corpus `name` (default: the file's directory name).

    Example: load_beir_queries(wh, "beir/nfcorpus/queries.jsonl")  # corpus 'nfcorpus'
    """
    return _load_texts(wh, path, name or _beir_name(path), "raw.queries", _beir_queries, "beir.queries")


def load_beir_qrels(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """A BEIR qrels TSV into the labels file (table `qrels`, iter '0'), replacing any earlier qrels there.

    As with TREC qrels, a labels file holds one set; the same bytes again are a no-op.
    Example: load_beir_qrels(wh, "data/scifact/derived/qrels_test.tsv")
    """
    data = read_file(path)
    sha = sha256_bytes(data)
    name = name or Path(path).name
    with wh.labels():
        previous = wh.sql("SELECT name, sha256 FROM labels.meta.sources WHERE table_name = 'qrels'")
        if previous == [(name, sha)]:
            return LoadResult("qrels", name, str(path), sha, 0, "unchanged")
        rows = _beir_qrels(path, _decode(path, data))
        _replace_qrels(wh, path, name, sha, rows)
    return LoadResult("qrels", name, str(path), sha, len(rows), "replaced" if previous else "loaded")


def _replace_qrels(wh: Warehouse, path: str | Path, name: str, sha: str, rows: list[Judgment]) -> None:
    """Put `rows` in place of the labels file's qrels, in one transaction (the labels file is attached)."""
    columns = ["line", "qid", "docno", "rel"]
    table = pa.table({column: [r[i] for r in rows] for i, column in enumerate(columns)})
    with wh.registered("rh_rows", table.append_column("iter", pa.array(["0"] * len(rows)))):
        with wh.transaction():
            wh.sql("DELETE FROM labels.qrels")
            wh.sql("DELETE FROM labels.meta.sources WHERE table_name = 'qrels'")
            wh.sql("INSERT INTO labels.qrels SELECT qid, iter, docno, rel, line FROM rh_rows")
            record_source(wh, "labels.meta.sources", "qrels", name, path, sha, len(rows), "beir.qrels")
