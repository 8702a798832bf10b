"""The named-feature study (seed 004 E2 and E5; studies/banking77_features.toml) on the small BANKING77
cut of tests/fixtures/banking77_small, run once end to end, and on hand-built toy warehouses: weights
and df, the three feature scores, full rankings with the row-index tie rule, the ablations, the
shared measures and the writer's files, each against an independent numpy / Python computation.

The extraction store and its generator are another part of issue 15: until they land, the schema is
loaded by a stand-in of its loader (a small TOML reader) and raw.feature_values is filled by a
deterministic stand-in extractor (keyword rules and a hash), both registered for this module only.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest
from conftest import FIXTURES

from rankhouse.errors import AuditError
from rankhouse.generators import GENERATORS
from rankhouse.loaders import LOADERS, Loader, LoadResult, load_documents, load_queries
from rankhouse.loaders.sources import loaded_sha, read_file, replace_named_rows, sha256_bytes
from rankhouse.paths import ROOT
from rankhouse.study import Protocol, Study
from rankhouse.study.outputs import write_outputs
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.runner import Runner

SMALL = FIXTURES / "banking77_small"
PROTOCOL = SMALL / "features.toml"
EXTRACTOR = "minilm:0123456789ab"  # the stand-in's id, in the shape of the minilm provider's

# The stand-in extractor's rules: a feature is strongly present in a message that contains one of its
# words, weakly or not at all otherwise (coarse values, so that many messages share feature lists).
KEYWORDS = {
    "card_delivery": ["arriv", "deliver", "come", "mail", "receive", "track"],
    "card_usage": ["accept", "use", "where", "shop", "business"],
    "card_linking": ["link", "add", "connect"],
    "pin": ["pin"],
    "compromise": ["stolen", "compromis", "someone", "recogni", "fraud", "hack"],
    "cash_withdrawal": ["cash", "atm", "withdraw", "machine"],
    "exchange_rate": ["exchange", "rate", "currenc"],
    "charges": ["fee", "charge", "extra", "statement"],
    "pending": ["pending", "still", "wait"],
    "eligibility": ["country", "live", "uk", "eu", "us", "where", "age"],
}


# -- stand-ins of the extraction part (schema loader and extractor), for this module only ------------
def load_test_schema(wh: Warehouse, path: str | Path, name: str | None = None) -> LoadResult:
    """The test schema (`[[feature]]` name, family, question) into raw.feature_schema under `name`."""
    data = read_file(path)
    sha = sha256_bytes(data)
    name = name or tomllib.loads(data.decode())["schema"]["name"]
    if loaded_sha(wh, "meta.sources", "raw.feature_schema", name) == sha:
        return LoadResult("raw.feature_schema", name, str(path), sha, 0, "unchanged")
    features = tomllib.loads(data.decode())["feature"]
    rows = pa.table({
        "schema": [name] * len(features), "schema_sha256": [sha] * len(features),
        "position": pa.array(range(1, len(features) + 1), pa.int32()),
        "feature": [f["name"] for f in features], "family": [f["family"] for f in features],
        "question": [f["question"] for f in features],
    })  # fmt: skip
    replace_named_rows(wh, "raw.feature_schema", "schema", name, rows, "meta.sources", "raw.feature_schema", path,
                       sha, "features.schema")  # fmt: skip
    return LoadResult("raw.feature_schema", name, str(path), sha, len(features), "loaded")


def stand_in_value(text: str, feature: str) -> float:
    """A deterministic value in whole thousandths: 1.0 or 0.5 (df's boundary) with one of the feature's words, else 0
    or (for one message in five) 0.2, chosen by a hash of the text and feature."""
    words = re.findall(r"[a-z]+", text.lower())
    bucket = int(hashlib.sha256(f"{feature}\n{text}".encode()).hexdigest()[:8], 16)
    if any(word.startswith(k) for word in words for k in KEYWORDS[feature]):
        return 1.0 if bucket % 3 else 0.5
    return 0.2 if bucket % 5 == 0 else 0.0


def write_feature_values(wh: Warehouse, corpus: str, schema: str, values: dict) -> None:
    """raw.feature_values of `corpus` for `schema` (its loaded SHA-256) from {(split, row): {feature:
    value}}, replacing the corpus's rows, with a meta.sources row whose digest covers the values."""
    sha = wh.sql("SELECT DISTINCT schema_sha256 FROM raw.feature_schema WHERE schema = ?", [schema])[0][0]
    rows = [(corpus, split, row, sha, EXTRACTOR, feature, value)
            for (split, row), found in sorted(values.items()) for feature, value in found.items()]  # fmt: skip
    columns = ["corpus", "split", "row_index", "schema_sha256", "extractor", "feature", "value"]
    table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(columns)})
    table = table.set_column(2, "row_index", pa.array(table["row_index"].to_pylist(), pa.int32()))
    digest = sha256_bytes(json.dumps(rows).encode())
    replace_named_rows(wh, "raw.feature_values", "corpus", corpus, table, "meta.sources", "raw.feature_values",
                       f"stand-in extractor {EXTRACTOR}", digest, "test.stand_in")  # fmt: skip


def extract_stand_in(context, key: str, options: dict) -> None:  # noqa: ANN001 - generators.Context
    """The [generate.features] stand-in: stand_in_value of every training and test message."""
    corpus, schema = options["corpus"], options["schema"]
    features = [f for (f,) in context.wh.sql(
        "SELECT feature FROM raw.feature_schema WHERE schema = ? ORDER BY position", [schema])]  # fmt: skip
    values = {}
    for split, table in (("train", "raw.documents"), ("test", "raw.queries")):
        for row, text in context.wh.sql(f"SELECT row_index, text FROM {table} WHERE corpus = ?", [corpus]):
            values[(split, row)] = {f: stand_in_value(text, f) for f in features}
    write_feature_values(context.wh, corpus, schema, values)
    context.produced("raw.feature_values", {"corpus": corpus}, corpus)
    context.say(f"{key}: stand-in values of {len(values)} messages")


@dataclass(frozen=True)
class StandInGenerator:
    options: tuple = ("corpus", "schema", "provider")

    def run(self, context, key: str, options: dict) -> None:  # noqa: ANN001
        extract_stand_in(context, key, options)


@pytest.fixture(scope="module")
def stand_ins():
    """The schema loader and extractor stand-ins, registered while the module's fixtures use them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(
            LOADERS,
            "features.schema",
            Loader("features.schema", load_test_schema, False, (("raw.feature_schema", "schema"),)),
        )
        patch.setitem(GENERATORS, "feature_extraction", StandInGenerator())
        yield


# -- the small study, run once ----------------------------------------------------------------------
def csv_rows(name: str) -> list[dict]:
    with (SMALL / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


@pytest.fixture(scope="module")
def small(stand_ins, tmp_path_factory):
    """tests/fixtures/banking77_small/features.toml run end to end (prepare, freeze, evaluate) and written
    out, once; with the independent oracle's inputs: the texts, intents and feature matrices in
    thousandths, read from the CSV files and the schema file, not from the warehouse."""
    root = tmp_path_factory.mktemp("features")
    wh = Warehouse(root / "features.duckdb")
    study = Study(Protocol.load(PROTOCOL), wh, root / "freezes")
    evaluation = study.run()
    out = root / "out"
    written = write_outputs(study, evaluation, out)
    train, test = csv_rows("train.csv"), csv_rows("test.csv")
    schema = tomllib.loads((SMALL / "features.schema.toml").read_text())["feature"]
    features = [f["name"] for f in schema]

    def matrix(rows: list[dict]) -> np.ndarray:
        return np.array([[round(stand_in_value(r["text"], f) * 1000) for f in features] for r in rows], np.int64)

    yield SimpleNamespace(
        wh=wh, study=study, evaluation=evaluation, freeze=evaluation.freeze.freeze_id, out=out, written=written,
        results=json.loads((out / "results.json").read_text()), train=train, test=test, schema=schema,
        features=features, D=matrix(train), Q=matrix(test),
    )  # fmt: skip
    wh.close()


# -- the oracle: numpy and exact Python arithmetic ----------------------------------------------------
def weights_of(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(df, w) of seed 004: df = training values >= 0.5, w = ln((N + 1) / (df + 1))."""
    df = (D >= 500).sum(axis=0)
    return df, np.log((len(D) + 1) / (df + 1))


def exact_keys(method: str, Q: np.ndarray, D: np.ndarray, kept: np.ndarray | None = None) -> list[list]:
    """Per query and document, an exact number that orders documents as the method's score does: the
    dot product of thousandths; the cosine's square times |q|^2 as a Fraction; the numerator of
    weighted relevance with weights in whole 1e-6 units (rounded half up), removed features (kept 0)
    dropped."""
    dots = Q @ D.T
    if method == "dot":
        return dots.tolist()
    if method == "cosine":
        norms = (D * D).sum(axis=1)
        return [[Fraction(int(x) ** 2, int(n)) if x else Fraction(0) for x, n in zip(row, norms)] for row in dots]
    _, w = weights_of(D)
    units = np.floor(w * 1e6 + 0.5).astype(np.int64) * (1 if kept is None else kept)
    return ((Q * units) @ D.T).tolist()


def ranked(keys: list[list], depth: int | None = None) -> list[list[int]]:
    """Each query's documents by key descending, exact ties by row ascending (seed 004's tie rule)."""
    return [sorted(range(len(row)), key=lambda d: (-row[d], d))[:depth] for row in keys]


def warehouse_rankings(wh: Warehouse, table: str, system: str, depth: int | None = None) -> list[list[int]]:
    where = f" AND rank <= {depth}" if depth else ""
    found: dict = {}
    for query, doc in wh.sql(
        f"SELECT query_key, doc_key FROM {table} WHERE system = ?{where} ORDER BY query_key, rank", [system]
    ):
        found.setdefault(query, []).append(doc)
    return [found[q] for q in sorted(found)]


def hits(ranking: list[int], query: int, train: list[dict], test: list[dict]) -> list[bool]:
    return [train[d]["category"] == test[query]["category"] for d in ranking]


# -- weights, scores and rankings ---------------------------------------------------------------------
def test_weights_and_document_frequencies_match_numpy(small):
    df, w = weights_of(small.D)
    rows = small.wh.sql("SELECT feature, position, family, df, documents, weight FROM models.feature_weights "
                        "ORDER BY position")  # fmt: skip
    assert [r[0] for r in rows] == small.features
    assert [r[2] for r in rows] == [f["family"] for f in small.schema]
    assert [r[3] for r in rows] == df.tolist()
    assert {r[4] for r in rows} == {len(small.train)}
    assert np.allclose([r[5] for r in rows], w, rtol=0, atol=1e-12)
    assert len(set(df.tolist())) > 1  # the fixture's weights are not uniform
    published = list(csv.DictReader((small.out / "weights.csv").open()))
    assert [int(r["df"]) for r in published] == df.tolist()
    assert [float(r["weight"]) for r in published] == [r[5] for r in rows]


def test_feature_lists_are_the_values_in_schema_order(small):
    docs = dict(small.wh.sql("SELECT doc_row, feature_units FROM models.document_features"))
    queries = dict(small.wh.sql("SELECT query_row, feature_units FROM models.query_features"))
    assert [docs[i] for i in range(len(small.train))] == small.D.tolist()
    assert [queries[i] for i in range(len(small.test))] == small.Q.tolist()


def scores_of(wh: Warehouse, model: str, shape: tuple[int, int]) -> np.ndarray:
    found = np.full(shape, np.nan)
    for query, doc, score in wh.sql(f"SELECT query_row, doc_row, score FROM models.{model}"):
        found[query, doc] = score
    return found


def test_scores_match_numpy(small):
    Q, D = small.Q / 1000, small.D / 1000
    shape = (len(Q), len(D))
    dot = Q @ D.T
    assert np.array_equal(scores_of(small.wh, "feature_dot_scores", shape), (small.Q @ small.D.T) / 1e6)
    assert np.allclose(scores_of(small.wh, "feature_dot_scores", shape), dot, rtol=0, atol=1e-12)
    norms = np.outer(np.linalg.norm(Q, axis=1), np.linalg.norm(D, axis=1))
    cosine = np.divide(dot, norms, out=np.zeros(shape), where=norms > 0)
    assert np.allclose(scores_of(small.wh, "feature_cosine_scores", shape), cosine, rtol=0, atol=1e-12)
    _, w = weights_of(small.D)
    denominator = (Q * w).sum(axis=1, keepdims=True)
    weighted = np.divide((Q * w) @ D.T, denominator, out=np.zeros(shape), where=denominator > 0)
    # the weights are taken in whole 1e-6 units: each is off by at most 5e-7 (relative 4e-7 here)
    assert np.allclose(scores_of(small.wh, "feature_weighted_scores", shape), weighted, rtol=0, atol=1e-6)


@pytest.mark.parametrize("method", ["cosine", "dot", "weighted"])
def test_full_rankings_follow_the_exact_tie_rule(small, method):
    keys = exact_keys(method, small.Q, small.D)
    expected = ranked(keys)
    assert warehouse_rankings(small.wh, "models.feature_rankings", method) == expected
    ranks = small.wh.sql("SELECT DISTINCT rank FROM models.feature_rankings WHERE system = ? ORDER BY rank", [method])
    assert [r for (r,) in ranks] == list(range(1, len(small.train) + 1))  # full ranks, every candidate
    # exact ties occur (identical feature lists among them), so the row-index rule decides real positions
    tied = sum(keys[q][a] == keys[q][b] for q, row in enumerate(expected) for a, b in zip(row, row[1:]))
    assert tied > 100


def test_bm25_is_e1s_ranking(small):
    e1 = small.wh.sql("SELECT query_row, doc_row, rank, score FROM models.bm25_ranking ORDER BY ALL")
    e2 = small.wh.sql(
        "SELECT query_key, doc_key, rank, score FROM models.feature_rankings WHERE system = 'bm25' ORDER BY ALL"
    )
    assert e1 == e2 and len(e1) == len(small.test) * len(small.train)


def test_dot_and_weighted_differ_for_some_query_when_the_weights_differ(small):
    dot = warehouse_rankings(small.wh, "models.feature_rankings", "dot")
    weighted = warehouse_rankings(small.wh, "models.feature_rankings", "weighted")
    assert sum(a != b for a, b in zip(dot, weighted)) > 0


# -- toy warehouses: built ties, zero vectors, uniform weights, refused extractions ----------------------
TOY_PARAMS = {"corpus": "toy", "schema": "toy_features", "provider": "minilm"}


def toy_warehouse(folder: Path, documents: list[list[int]], queries: list[list[int]]) -> Warehouse:
    """An in-memory warehouse with a toy corpus (texts 'd<i>' and 'q<i>'), a schema of one feature per
    column (families f1, f2, ... by pairs) and the given feature values in thousandths."""
    features = len(documents[0])
    for name, rows, prefix in (("docs.csv", documents, "d"), ("queries.csv", queries, "q")):
        (folder / name).write_text("text,category\n" + "".join(f"{prefix}{i} word,x\n" for i in range(len(rows))))
    wh = Warehouse(":memory:")
    load_documents(wh, folder / "docs.csv", "toy")
    load_queries(wh, folder / "queries.csv", "toy")
    for position in range(1, features + 1):
        wh.sql("INSERT INTO raw.feature_schema VALUES ('toy_features', 'toy-sha', ?, ?, ?, ?)",
               [position, f"x{position}", f"f{(position + 1) // 2}", f"question {position}?"])  # fmt: skip
    values = {("train", i): {f"x{j + 1}": v / 1000 for j, v in enumerate(row)} for i, row in enumerate(documents)}
    values |= {("test", i): {f"x{j + 1}": v / 1000 for j, v in enumerate(row)} for i, row in enumerate(queries)}
    write_feature_values(wh, "toy", "toy_features", values)
    return wh


def build(wh: Warehouse, spec: str) -> None:
    project = Project.load(params=TOY_PARAMS)
    Runner(wh, project, TOY_PARAMS).run(project.select(spec))


# d1 = 2 x d0 (the same cosine for every query), d2 all zeros, d3 = d4 identical
TIES_DOCUMENTS = [[400, 0, 0], [800, 0, 0], [0, 0, 0], [300, 600, 0], [300, 600, 0], [0, 0, 1000], [0, 700, 0]]
TIES_QUERIES = [[600, 800, 0], [0, 0, 0], [1000, 0, 0]]


@pytest.fixture(scope="module")
def ties(tmp_path_factory):
    wh = toy_warehouse(tmp_path_factory.mktemp("ties"), TIES_DOCUMENTS, TIES_QUERIES)
    build(wh, "+feature_rankings")
    yield wh
    wh.close()


def test_equal_cosines_tie_exactly_and_the_row_decides(ties):
    cosine = {(q, d): (key, score) for q, d, key, score in ties.sql(
        "SELECT query_row, doc_row, score_key, score FROM models.feature_cosine_scores")}  # fmt: skip
    assert cosine[2, 0] == cosine[2, 1] and cosine[2, 0][1] == 1.0  # proportional lists: one cosine, exactly
    assert cosine[0, 3] == cosine[0, 4]  # identical lists
    assert warehouse_rankings(ties, "models.feature_rankings", "cosine")[2] == [0, 1, 3, 4, 2, 5, 6]


def test_identical_documents_tie_in_every_feature_method(ties):
    for method in ("cosine", "dot", "weighted"):
        for ranking in warehouse_rankings(ties, "models.feature_rankings", method):
            assert ranking.index(4) == ranking.index(3) + 1, method
    assert warehouse_rankings(ties, "models.feature_rankings", "dot")[2] == [1, 0, 3, 4, 2, 5, 6]
    assert warehouse_rankings(ties, "models.feature_rankings", "weighted")[2] == [1, 0, 3, 4, 2, 5, 6]


def test_a_zero_vector_scores_0_and_a_zero_denominator_gives_0(ties):
    rows = ties.sql("SELECT 'cosine', query_row, doc_row, score FROM models.feature_cosine_scores UNION ALL "
                    "SELECT 'weighted', query_row, doc_row, score FROM models.feature_weighted_scores")  # fmt: skip
    scores = {(m, q, d): s for m, q, d, s in rows}
    assert all(scores["cosine", q, 2] == 0 for q in range(3))  # the zero document
    assert all(scores[m, 1, d] == 0 for m in ("cosine", "weighted") for d in range(7))  # the zero query
    assert ties.sql("SELECT denominator FROM models.weighted_queries WHERE query_row = 1") == [(0,)]
    for method in ("cosine", "dot", "weighted"):  # every score 0: the row-index rule orders them all
        assert warehouse_rankings(ties, "models.feature_rankings", method)[1] == list(range(7))
    assert scores["weighted", 2, 1] == 0.8 and scores["weighted", 2, 3] == 0.3  # sum(w q d) / sum(w q), q = (1, 0, 0)


def uniform_collection(seed: int) -> tuple[list[list[int]], list[list[int]]]:
    """12 documents and 10 queries over 4 features, every feature >= 0.5 in exactly 3 documents (the
    same df, so the same weight), values in steps of 50 (ties)."""
    rng = np.random.default_rng(seed)
    documents = rng.integers(0, 10, size=(12, 4)) * 50  # below 500
    for feature in range(4):
        documents[rng.choice(12, size=3, replace=False), feature] = rng.integers(10, 21, size=3) * 50
    return documents.tolist(), (rng.integers(0, 21, size=(10, 4)) * 50).tolist()


def test_dot_and_weighted_rank_identically_when_the_weights_are_uniform(tmp_path):
    # seed 004: a query-only denominator cannot change a ranking, so only the global weights can make
    # weighted relevance rank otherwise than the dot product (and do, on the fixture: test above)
    documents, queries = uniform_collection(7)
    wh = toy_warehouse(tmp_path, documents, queries)
    build(wh, "+feature_rankings")
    assert {df for (df,) in wh.sql("SELECT df FROM models.feature_weights")} == {3}
    keys = exact_keys("dot", np.array(queries), np.array(documents))
    dot = warehouse_rankings(wh, "models.feature_rankings", "dot")
    assert warehouse_rankings(wh, "models.feature_rankings", "weighted") == dot == ranked(keys)
    assert sum(len(set(row)) < len(row) for row in keys) > 0  # with exact ties, which fall the same way


def test_an_incomplete_extraction_is_refused_and_builds_nothing(tmp_path):
    wh = toy_warehouse(tmp_path, TIES_DOCUMENTS, TIES_QUERIES)
    wh.sql("DELETE FROM raw.feature_values WHERE split = 'train' AND row_index = 5 AND feature = 'x2'")
    with pytest.raises(
        AuditError, match=r"(?s)feature_coverage: audit accepted_range\(missing, 0, 0\).*split='train'.*missing=1"
    ):
        build(wh, "+feature_rankings")
    assert not wh.table_exists("models.feature_coverage") and not wh.table_exists("models.document_features")


def test_two_extractors_of_the_provider_are_refused(tmp_path):
    wh = toy_warehouse(tmp_path, TIES_DOCUMENTS, TIES_QUERIES)
    wh.sql("INSERT INTO raw.feature_values SELECT corpus, split, row_index, schema_sha256, 'minilm:ffffffffffff', "
           "feature, value FROM raw.feature_values")  # fmt: skip
    # the coverage gate refuses first: no row is complete when two extractors of the provider have values
    with pytest.raises(AuditError, match=r"(?s)feature_coverage: audit accepted_range.*missing=7, extractors=2"):
        build(wh, "+feature_rankings")
    # and the study's extractor, read on its own, refuses them too
    with pytest.raises(AuditError, match="feature_extractor: audit unique_grain"):
        build(wh, "+feature_extractor")


# -- E5: ablations --------------------------------------------------------------------------------------
def ablation_masks(schema: list[dict]) -> dict[str, np.ndarray]:
    """Each E5 variant's system name and its kept features (1) and removed ones (0)."""
    masks = {}
    for i, feature in enumerate(schema):
        masks[f"weighted-without-{feature['name']}"] = np.array([int(j != i) for j in range(len(schema))])
    for family in dict.fromkeys(f["family"] for f in schema):
        masks[f"weighted-without-family-{family}"] = np.array([int(f["family"] != family) for f in schema])
    return masks


def test_ablation_rankings_are_the_first_10_of_the_recomputed_rankings(small):
    masks = ablation_masks(small.schema)
    assert {v for (v,) in small.wh.sql("SELECT variant FROM models.feature_ablation_variants")} == set(masks)
    for variant, kept in masks.items():
        keys = exact_keys("weighted", small.Q, small.D, kept)
        assert warehouse_rankings(small.wh, "models.feature_ablation_rankings", variant) == ranked(keys, 10), variant
    # the weights stay the full system's: removing a feature changes no other feature's weight
    assert small.wh.sql("SELECT count(DISTINCT weight) FROM models.feature_weights")[0][0] == len(small.schema)


def test_ablation_scores_drop_the_removed_terms_from_numerator_and_denominator(small):
    _, w = weights_of(small.D)
    kept = ablation_masks(small.schema)["weighted-without-family-money_movement"]
    Q, D = small.Q / 1000 * kept, small.D / 1000
    expected = np.divide((Q * w) @ D.T, (Q * w).sum(axis=1, keepdims=True), out=np.zeros((len(Q), len(D))),
                         where=(Q * w).sum(axis=1, keepdims=True) > 0)  # fmt: skip
    rows = small.wh.sql("SELECT query_key, doc_key, score FROM models.feature_ablation_rankings "
                        "WHERE system = 'weighted-without-family-money_movement'")  # fmt: skip
    assert len(rows) == 10 * len(small.test)
    assert max(abs(score - expected[q, d]) for q, d, score in rows) < 1e-6


def top1_and_hit5(rankings: list[list[int]], train: list[dict], test: list[dict]) -> tuple[float, float]:
    found = [hits(r, q, train, test) for q, r in enumerate(rankings)]
    return sum(f[0] for f in found) / len(found), sum(any(f[:5]) for f in found) / len(found)


def test_ablation_changes_match_a_python_recomputation(small):
    full = top1_and_hit5(ranked(exact_keys("weighted", small.Q, small.D), 5), small.train, small.test)
    table = {(v, m): (value, full_value, change) for v, m, value, full_value, change in small.wh.sql(
        "SELECT variant, measure, value, full_value, change FROM results.feature_ablations WHERE freeze_id = ?",
        [small.freeze])}  # fmt: skip
    masks = ablation_masks(small.schema)
    assert len(table) == 2 * len(masks)
    for variant, kept in masks.items():
        ablated = top1_and_hit5(ranked(exact_keys("weighted", small.Q, small.D, kept), 5), small.train, small.test)
        for i, measure in enumerate(["Top-1", "Hit@5"]):
            value, full_value, change = table[variant, measure]
            assert (value, full_value) == pytest.approx((ablated[i], full[i]), abs=1e-15), (variant, measure)
            assert change == pytest.approx(ablated[i] - full[i], abs=1e-15)
    assert any(change != 0 for _, _, change in table.values())


# -- E2 measures through the shared layer -------------------------------------------------------------
def test_e2_measures_agree_with_python(small):
    seen = {normalised(r["text"]) for r in small.train}
    subsets = {
        "all": list(range(len(small.test))),
        "without_training_duplicates": [q for q, r in enumerate(small.test) if normalised(r["text"]) not in seen],
    }
    rankings = {m: ranked(exact_keys(m, small.Q, small.D)) for m in ("cosine", "dot", "weighted")}
    rankings["bm25"] = warehouse_rankings(small.wh, "models.feature_rankings", "bm25")
    assert len(subsets["without_training_duplicates"]) == len(small.test) - 7
    measured = {
        (m, s, k): v
        for m, s, k, v in small.wh.sql(
            "SELECT method, subset, measure, value FROM results.retrieval_metrics WHERE freeze_id = ?", [small.freeze]
        )
    }
    for method, ranking in rankings.items():
        found = [hits(r, q, small.train, small.test) for q, r in enumerate(ranking)]
        for subset, queries in subsets.items():
            expected = {
                "Top-1": sum(found[q][0] for q in queries) / len(queries),
                "Hit@5": sum(any(found[q][:5]) for q in queries) / len(queries),
                "RR": sum(1 / (found[q].index(True) + 1) for q in queries) / len(queries),
            }
            for measure, value in expected.items():
                assert measured[method, subset, measure] == pytest.approx(value, abs=1e-12), (method, subset, measure)
    top1 = {m: np.array([hits(r, q, small.train, small.test)[0] for q, r in enumerate(rankings[m])], float)
            for m in rankings}  # fmt: skip
    contrasts = dict(small.wh.sql("SELECT contrast, mean FROM results.paired_bootstrap WHERE freeze_id = ? AND "
                                  "subset = 'all'", [small.freeze]))  # fmt: skip
    assert set(contrasts) == {"weighted - bm25", "cosine - bm25", "dot - bm25", "weighted - dot", "weighted - cosine"}
    for contrast, mean in contrasts.items():
        a, b = contrast.split(" - ")
        assert mean == pytest.approx((top1[a] - top1[b]).mean(), abs=1e-12)


# -- the writer's files -----------------------------------------------------------------------------------
def test_every_output_is_labelled_with_the_stand_in(small):
    block = small.results["extractor"]
    assert block["provider"] == "minilm" and block["extractor"] == EXTRACTOR and block["stand_in"] is True
    assert "not seed 004's JEV" in block["note"]
    names = {p.name for p in small.written}
    assert names >= {
        "results.json",
        "weights.csv",
        "feature_distributions.csv",
        "per_query.csv",
        "confusions.csv",
        "ablations.csv",
        "class_results.csv",
        "fingerprints.json",
        "DATASET_SOURCE.md",
        "report.md",
    }
    for path in small.written:
        if path.suffix == ".csv":
            rows = list(csv.DictReader(path.open()))
            assert rows and {(r["extractor"], r["stand_in"]) for r in rows} == {(EXTRACTOR, "true")}, path.name
    assert json.loads((small.out / "fingerprints.json").read_text())["extractor"] == block
    report = (small.out / "report.md").read_text()
    assert "stand-in" in report.splitlines()[2].lower() and EXTRACTOR in report.splitlines()[2]
    for limit in ("Small schema", "Correlated features", "Extractor errors", "Benchmark contamination",
                  "Proxy judgments", "Uncertain interpretation", "Single domain"):  # fmt: skip
        assert f"**{limit}" in report
    assert "## E3: broader semantic retrieval\n\nnot part of this protocol" in report
    assert "## E4: controllability\n\nnot part of this protocol" in report
    assert "weighted loses to bm25" in report  # as it comes out on the fixture


def test_results_json_has_the_four_methods_and_the_identities(small):
    found = small.results
    assert set(found["methods"]) == {"bm25", "cosine", "dot", "weighted"}  # no ablation system among them
    assert found["methods"]["weighted"]["Top-1"]["queries"] == len(small.test)
    assert "ci_low" in found["methods"]["cosine"]["Hit@5"] and "ci_low" not in found["methods"]["cosine"]["RR"]
    assert set(found["subsets"]["without_training_duplicates"]) == set(found["methods"])
    assert found["duplicates"]["queries_whose_text_is_a_document"] == 7
    prints = found["fingerprints"]
    assert prints["schema"]["sha256"] == hashlib.sha256((SMALL / "features.schema.toml").read_bytes()).hexdigest()
    assert prints["protocol"]["sha256"] == hashlib.sha256(PROTOCOL.read_bytes()).hexdigest()
    assert {s["table"] for s in prints["sources"]} >= {"raw.feature_values", "raw.feature_schema", "raw.documents"}
    assert found["dataset"]["sha256"] == hashlib.sha256((SMALL / "SOURCE.md").read_bytes()).hexdigest()
    assert (small.out / "DATASET_SOURCE.md").read_bytes() == (SMALL / "SOURCE.md").read_bytes()
    assert any(command.startswith("rankhouse study run ") for command in found["reproduction"])
    assert [w["df"] for w in found["weights"]] == weights_of(small.D)[0].tolist()


def test_per_query_predictions_and_confusions(small):
    rows = list(csv.DictReader((small.out / "per_query.csv").open()))
    assert len(rows) == 4 * len(small.test)
    dot = ranked(exact_keys("dot", small.Q, small.D), 1)
    for row in rows:
        query = int(row["qid"])  # the CSV loader's qid is the row index
        assert row["intent"] == small.test[query]["category"]
        assert row["top1_intent"] == small.train[int(row["top1_doc_id"])]["category"]
        assert row["correct"] == str(row["top1_intent"] == row["intent"]) and row["top1"] == str(
            int(row["correct"] == "True")
        )
        if row["method"] == "dot":
            assert int(row["top1_doc_id"]) == dot[query][0]
    errors: dict = {}
    for row in rows:
        if row["correct"] == "False":
            key = (row["method"], row["intent"], row["top1_intent"])
            errors[key] = errors.get(key, 0) + 1
    confusions = list(csv.DictReader((small.out / "confusions.csv").open()))
    for method in ("bm25", "cosine", "dot", "weighted"):
        expected = sorted(((-n, q, t) for (m, q, t), n in errors.items() if m == method))[:10]
        found = [(-int(r["errors"]), r["query_intent"], r["top1_intent"]) for r in confusions if r["method"] == method]
        assert found == expected, method


def test_feature_distributions_match_numpy(small):
    rows = {(r["feature"], r["split"]): r for r in csv.DictReader((small.out / "feature_distributions.csv").open())}
    for split, matrix in (("train", small.D), ("test", small.Q)):
        for i, feature in enumerate(small.features):
            values = matrix[:, i] / 1000
            row = rows[feature, split]
            assert float(row["mean"]) == pytest.approx(values.mean(), abs=1e-12)
            assert [float(row[p]) for p in ("p10", "p50", "p90")] == pytest.approx(
                np.percentile(values, [10, 50, 90]).tolist(), abs=1e-12)  # fmt: skip
            assert float(row["share_high"]) == pytest.approx((values >= 0.5).mean(), abs=1e-12)


# -- the protocols ----------------------------------------------------------------------------------------
def test_the_fixture_protocol_is_the_studys_with_200_replicates():
    study = tomllib.loads((ROOT / "studies" / "banking77_features.toml").read_text())
    fixture = tomllib.loads(PROTOCOL.read_text())
    e1 = tomllib.loads((ROOT / "studies" / "banking77.toml").read_text())
    # the fixture evaluates E2 and E5 only: the study's parameters without its E3/E4 parts
    parts = {"part_judgments", "cluster_plan", "cluster_measures", "filter_units"}
    e2 = {k: v for k, v in study["parameters"].items() if k not in parts}
    e2["rankings"] = [r for r in e2["rankings"] if "@" not in r]
    e2["measures"] = e2["measures"][:6]
    assert fixture["parameters"] == e2 and set(study["parameters"]) - set(e2) == parts
    assert fixture["outputs"] == study["outputs"] == {"writer": "features"}
    assert study["generate"]["top1_bootstrap"] == e1["generate"]["top1_bootstrap"]
    assert fixture["generate"]["top1_bootstrap"] == {**study["generate"]["top1_bootstrap"], "replicates": 200}
    assert (
        fixture["generate"]["features"]
        == study["generate"]["features"]
        == {"kind": "feature_extraction", "corpus": "banking77", "schema": "banking77_features", "provider": "minilm"}
    )
    assert {k: study["inputs"][k] for k in e1["inputs"]} == e1["inputs"]  # the same four CSV inputs as E1
    assert study["inputs"]["schema"]["loader"] == fixture["inputs"]["schema"]["loader"] == "features.schema"
    for key, entry in fixture["inputs"].items():
        assert hashlib.sha256((SMALL / entry["path"]).read_bytes()).hexdigest() == entry["sha256"], key
    for key in ("wilson_measures", "macro_measures", "judgments", "query_subsets", "k1", "b", "resample"):
        assert study["parameters"][key] == e1["parameters"][key], key
    assert study["parameters"]["measures"][:6] == e1["parameters"]["measures"]  # E2's are E1's; then E3/E4's


# -- the report (rankhouse report DIR) --------------------------------------------------------------------
def test_the_report_draws_e5_and_keeps_one_markdown_report(small, tmp_path):
    """E5's bars are results.feature_ablations' changes; the writer's report.md keeps its text and gets the
    figures once, however often the report runs; it stays the study's one Markdown report."""
    from conftest import copied
    from report_pages import figures, marks

    from rankhouse.report import build

    folder = copied(small.out, tmp_path / "out")
    written = (folder / "report.md").read_text()
    build(folder)
    build(folder)
    found = figures((folder / "report.html").read_text())
    changes = small.wh.sql(
        "SELECT variant, measure, change FROM results.feature_ablations WHERE freeze_id = ?", [small.freeze]
    )
    drawn = {(m["label"], m["series"], float(m["value"])) for m in marks(found["e5-ablations"])}
    assert drawn == {(v.removeprefix("weighted-without-"), m, c) for v, m, c in changes} and len(drawn) == len(changes)
    markdown = (folder / "report.md").read_text()
    assert markdown.startswith(written.rstrip("\n"))  # the writer's text, untouched
    assert markdown.count("<!-- rankhouse report: begin") == 1 and markdown.rstrip().endswith(
        "rankhouse report: end -->"
    )
    linked = re.findall(r"\(figures/([^)]+)\.svg\)", markdown)
    assert linked == list(found) and all((folder / "figures" / f"{i}.svg").is_file() for i in linked)
    assert "## E5: ablations of weighted relevance" in markdown and "### Freeze chain" in markdown
    assert sorted(p.name for p in folder.glob("*.md")) == ["DATASET_SOURCE.md", "report.md"]  # the data's notice
