"""Seed 004 E3 (broader semantic retrieval) and E4 (controllability) on a tiny synthetic warehouse: the
groups and requirements loaders, phrase BM25, requirement scores, rankings, judgments, per-group means,
the cluster bootstrap, E4's penalties, filter, survival, rank changes and audits, each checked against
a plain-Python (or numpy) computation written here, and the writer's results and CSVs."""

from __future__ import annotations

import csv
import math
import random
import re
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import FIXTURES

from rankhouse.errors import AuditError, InputError, ModelError
from rankhouse.generators import GENERATORS, Context
from rankhouse.loaders import LOADERS, load_document_classes, load_documents
from rankhouse.studies.features.groups import load_groups, load_requirements
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.audits import audit_sql
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.render import render
from rankhouse.warehouse.runner import Runner

GROUPS = FIXTURES / "features" / "groups.toml"
REQUIREMENTS = FIXTURES / "features" / "requirements.toml"
CORPUS = "tiny77"
SCHEMA, SCHEMA_SHA = "tiny_schema", "5" * 64
EXTRACTOR = "minilm:0123456789ab"
FEATURES = [  # (feature, family)
    ("card_delivery", "cards"), ("card_order", "cards"), ("card_payment", "cards"), ("cash_withdrawal", "cash"),
    ("top_up", "cash"), ("currency", "cash"), ("problem_report", "state"), ("declined_or_rejected", "state"),
    ("pending_state", "state"), ("fees", "money"),
]  # fmt: skip
INTENTS = {  # intent -> (words of its messages, features it tends to have)
    "card_arrival": ("card arrived post late", ("card_delivery", "problem_report")),
    "card_delivery_estimate": ("card delivery time days", ("card_delivery", "card_order")),
    "declined_cash_withdrawal": ("atm declined cash withdrawal", ("cash_withdrawal", "declined_or_rejected")),
    "wrong_amount_of_cash_received": ("atm wrong amount cash", ("cash_withdrawal", "problem_report")),
    "pending_card_payment": ("card payment pending still", ("card_payment", "pending_state")),
    "card_payment_fee_charged": ("fee charged card payment", ("card_payment", "fees")),
    "top_up_failed": ("top up failed money", ("top_up", "problem_report", "declined_or_rejected")),
    "exchange_rate": ("exchange rate currency", ("currency", "fees")),
}
FILLER = "my the please help today why is was".split()
DOCUMENTS = 48
MEASURES = ["P@10", "R@10", "Hit@10", "nDCG@10", "MRR"]
E3_SYSTEMS = ["phrase-bm25", "interpreted-requirements", "manual-requirements"]
PENALTIES = {"positive": 0.0, "penalty-0.25": 0.25, "penalty-0.5": 0.5, "penalty-1": 1.0}
E4_PENALISED = ("penalty-0.25", "penalty-0.5", "penalty-1", "hard-filter")
BASE = {"corpus": CORPUS, "schema": SCHEMA, "provider": "minilm"}
PREPARE = ("+group_rankings +group_clusters +group_interpretations +case_rankings +case_penalty_checks +case_filter "
           "+case_top10_changes")  # fmt: skip
REPLICATES = 500


# -- the synthetic inputs --------------------------------------------------------------------------
def synthetic_documents() -> list[tuple[str, str]]:
    """(text, intent) of every training document: six per intent, words of the intent and filler."""
    rng = random.Random(4)
    rows = []
    for row in range(DOCUMENTS):
        intent = list(INTENTS)[row % len(INTENTS)]
        words = INTENTS[intent][0].split()
        rows.append((" ".join(rng.sample(words, rng.randint(1, len(words))) + rng.sample(FILLER, 2)), intent))
    rows[17] = rows[9]  # the same text and intent twice: an exact BM25 tie, decided by the row
    return rows


def synthetic_units(documents: list[tuple[str, str]]) -> list[dict[str, int]]:
    """Each document's feature values in thousandths: high on its intent's features, low elsewhere."""
    rng = random.Random(7)
    units = []
    for _, intent in documents:
        tend = INTENTS[intent][1]
        units.append({f: rng.randint(500, 1000) if f in tend else rng.randint(0, 400) for f, _ in FEATURES})
    units[11] = dict(units[3])  # equal features: an exact requirement-score tie, decided by the row
    units[2]["declined_or_rejected"] = 150  # a declined withdrawal whose feature passes the filter
    units[2]["cash_withdrawal"] = 1000
    return units


def interpretations() -> tuple[dict[str, dict[str, float]], dict[str, tuple[bool, bool, float]]]:
    """The provider's interpreted weights per phrase (one phrase without any) and its flags (one
    phrase without diagnostics)."""
    rng = random.Random(11)
    weights, flags = {}, {}
    for group in ("G01", "G02", "G03", "G04"):
        for n in range(1, 5):
            item = f"{group}.{n}"
            if item != "G02.3":
                chosen = rng.sample([f for f, _ in FEATURES], rng.randint(1, 3))
                weights[item] = {f: rng.randint(1, 1000) / 1000 for f in chosen}
            if item != "G04.4":
                flags[item] = (item == "G02.3", item in ("G01.2", "G03.1", "G03.4"), rng.randint(0, 1000) / 1000)
    return weights, flags


def insert_features(wh, units: list[dict[str, int]]) -> None:
    for position, (feature, family) in enumerate(FEATURES, start=1):
        wh.sql("INSERT INTO raw.feature_schema VALUES (?, ?, ?, ?, ?, ?)",
               [SCHEMA, SCHEMA_SHA, position, feature, family, f"Is it about {feature}?"])  # fmt: skip
    rows = [
        (CORPUS, "train", row, SCHEMA_SHA, EXTRACTOR, f, u / 1000) for row, d in enumerate(units) for f, u in d.items()
    ]
    # another provider's extraction of the same rows, which the study's staging leaves out
    rows += [(CORPUS, "train", row, SCHEMA_SHA, "http:other", f, 1.0) for row, d in enumerate(units) for f in d]
    wh.con.executemany("INSERT INTO raw.feature_values VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    weights, flags = interpretations()
    wh.con.executemany("INSERT INTO raw.requirement_values VALUES (?, ?, ?, ?, ?, ?)",
                       [(CORPUS, item, SCHEMA_SHA, EXTRACTOR, f, w) for item, ws in weights.items()
                        for f, w in ws.items()])  # fmt: skip
    wh.con.executemany(
        "INSERT INTO raw.requirement_flags VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(CORPUS, item, SCHEMA_SHA, EXTRACTOR, u, r, c, None) for item, (u, r, c) in flags.items()],
    )


def write_train(folder: Path, documents: list[tuple[str, str]]) -> Path:
    path = folder / "train.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["text", "category"])
        writer.writerows(documents)
    return path


def build(wh, selection: str, params: dict, force: bool = False) -> None:
    project = Project.load(params=params)
    Runner(wh, project, params).run(project.select(selection), force=force)


def rows_of(wh, sql: str, params: list | None = None) -> list[dict]:
    columns, rows = wh.columns(sql, params) if params else wh.columns(sql)
    return [dict(zip(columns, row)) for row in rows]


EVALUATED = ("run_measures", "query_measures", "rankings", "judgments", "cluster_bootstrap", "group_results",
             "case_unwanted_rank_changes", "case_semantic_failures", "case_intent_documents")  # fmt: skip
EVALUATE = "+" + " +".join(EVALUATED)
PARTS = BASE | {
    "study": "tiny",
    "rankings": ["group_rankings@e3", "case_rankings@e4", "case_rankings@e4_unwanted"],
    "judgments": "class_judgments",  # the study's own (E2's) queries: this corpus has none
    "part_judgments": ["group_judgments@e3", "case_judgments@e4", "case_unwanted_judgments@e4_unwanted"],
    "measures": MEASURES,
    "cluster_plan": "tiny_clusters",
    "cluster_measures": MEASURES,
}


def evaluate(wh) -> dict[str, dict[str, list[dict]]]:
    """Evaluate the study's three parts at once, keep the outputs in results.* under a freeze id (as a
    study's evaluation does) and return each part's rows."""
    build(wh, EVALUATE, PARTS)
    parts: dict[str, dict[str, list[dict]]] = {"e3": {}, "e4": {}, "e4_unwanted": {}}
    for table in EVALUATED:
        rows = rows_of(wh, f"SELECT * FROM models.{table}")
        for part, kept in parts.items():
            kept[table] = [r for r in rows if r.get("study") in (f"tiny/{part}", None)]
        wh.sql(f"CREATE TABLE results.{table} AS SELECT 'tiny-1' AS freeze_id, * FROM models.{table}")
    return parts


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The synthetic warehouse, built through E3 and E4 (each part evaluated as the study's parts are)."""
    root = tmp_path_factory.mktemp("features")
    documents = synthetic_documents()
    units = synthetic_units(documents)
    wh = Warehouse(root / "tiny.duckdb")
    train = write_train(root, documents)
    said: list[str] = []
    with wh.writing_inputs():  # one load, as a study's prepare is
        load_documents(wh, train, CORPUS)
        load_document_classes(wh, train, CORPUS)
        load_groups(wh, GROUPS, CORPUS)
        load_requirements(wh, REQUIREMENTS, CORPUS)
        insert_features(wh, units)
        context = Context(wh, said.append, lambda label: lambda done, total: None, lambda spec: None)
        GENERATORS["cluster_plan"].run(
            context, "tiny_clusters", {"corpus": CORPUS, "seed": 5, "replicates": REPLICATES}
        )
    build(wh, PREPARE, BASE)
    wh.open_gate()
    parts = evaluate(wh)
    yield SimpleNamespace(wh=wh, root=root, documents=documents, units=units, parts=parts, said=said,
                          groups=group_spec(), cases=case_spec())  # fmt: skip
    wh.close()


def group_spec() -> list[dict]:
    import tomllib

    groups = tomllib.loads(GROUPS.read_text())["group"]
    weights = {g["id"]: g["weights"] for g in tomllib.loads(REQUIREMENTS.read_text())["group"]}
    return [g | {"weights": weights[g["id"]]} for g in groups]


def case_spec() -> list[dict]:
    import tomllib

    return tomllib.loads(REQUIREMENTS.read_text())["case"]


# -- plain-Python oracles -----------------------------------------------------------------------------
def python_bm25(documents: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Seed 004's BM25, written out: lowercase letter/number tokens, repeated query terms once."""
    docs = [re.findall(r"[a-z0-9]+", d.lower()) for d in documents]
    n, average = len(docs), sum(map(len, docs)) / len(docs)
    scores = []
    for doc in docs:
        score = 0.0
        for term in set(re.findall(r"[a-z0-9]+", query.lower())):
            tf = doc.count(term)
            if tf:
                df = sum(term in d for d in docs)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / average))
        scores.append(score)
    return scores


def python_weights(units: list[dict[str, int]]) -> dict[str, float]:
    n = len(units)
    return {f: math.log((n + 1) / (sum(u[f] >= 500 for u in units) + 1)) for f, _ in FEATURES}


def python_relevance(units: list[dict[str, int]], requirement: dict[str, float]) -> list[float]:
    """sum(r_i w_i d_i) / sum(r_i w_i), 0 for a zero denominator (seed 004), in exact rationals with the
    documented units (sql/macros/features.sql): r_i and d_i in whole thousandths, w_i in whole 1e-6."""
    w = {f: round(x * 1e6) for f, x in python_weights(units).items()}
    r = {f: round(x * 1000) for f, x in requirement.items()}
    denominator = sum(r[f] * w[f] for f in r)
    if denominator == 0:
        return [0.0] * len(units)
    return [float(Fraction(sum(r[f] * w[f] * u[f] for f in r), denominator * 1000)) for u in units]


def ranking(scores: list[float]) -> list[int]:
    """Rows by score descending, ties (to 1e-12) by row."""
    return sorted(range(len(scores)), key=lambda row: (-round(scores[row], 12), row))


def penalised(positive: float, penalty: float, units: int) -> int:
    """E4's penalised score in whole 1e-12 units: the positive score's, less penalty * d_unwanted's."""
    return round(positive * 10**12) - int(penalty * units * 10**9)


def python_measures(ranked: list[int], relevant: set[int]) -> dict[str, float]:
    top = ranked[:10]
    hits = [row in relevant for row in top]
    dcg = sum(1 / math.log2(i + 2) for i, hit in enumerate(hits) if hit)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    first = next((i + 1 for i, row in enumerate(ranked) if row in relevant), None)
    return {
        "P@10": sum(hits) / 10,
        "R@10": sum(hits) / len(relevant) if relevant else 0.0,
        "Hit@10": 1.0 if any(hits) else 0.0,
        "nDCG@10": dcg / ideal if ideal else 0.0,
        "MRR": 1 / first if first else 0.0,
    }


def sql_ranking(wh, model: str, system: str, query_key: int) -> list[int]:
    return [r[0] for r in wh.sql(f"SELECT doc_key FROM models.{model} WHERE system = ? AND query_key = ? ORDER BY rank",
                                 [system, query_key])]  # fmt: skip


def phrases(tiny) -> list[tuple[str, int, str, dict]]:
    """(item, query_key, text, group) of every E3 phrase, from the fixture file."""
    return [(f"{g['id']}.{n}", 1000 + 10 * row + n, text, g)
            for row, g in enumerate(tiny.groups) for n, text in enumerate(g["paraphrases"], start=1)]  # fmt: skip


def e3_oracle(tiny) -> dict[tuple[str, str], list[int]]:
    """(system, item) -> the Python ranking."""
    weights, _ = interpretations()
    texts = [t for t, _ in tiny.documents]
    out = {}
    for item, _, text, group in phrases(tiny):
        out[("phrase-bm25", item)] = ranking(python_bm25(texts, text))
        out[("interpreted-requirements", item)] = ranking(python_relevance(tiny.units, weights.get(item, {})))
        out[("manual-requirements", item)] = ranking(python_relevance(tiny.units, group["weights"]))
    return out


def relevant_to(tiny, intents: list[str]) -> set[int]:
    return {row for row, (_, intent) in enumerate(tiny.documents) if intent in intents}


# -- loaders -------------------------------------------------------------------------------------------
def test_loaders_are_registered_label_free():
    assert not LOADERS["features.groups"].labels and not LOADERS["features.requirements"].labels
    assert ("raw.case_intents", "corpus") in LOADERS["features.requirements"].writes


def test_the_groups_load_in_file_order(wh):
    result = load_groups(wh, GROUPS, "g")
    assert (result.status, result.rows) == ("loaded", 16)
    assert load_groups(wh, GROUPS, "g").status == "unchanged"
    rows = wh.sql("SELECT group_id, group_row, paraphrase, item, text FROM raw.group_paraphrases ORDER BY ALL")
    expected = [(g["id"], row, n, f"{g['id']}.{n}", t) for row, g in enumerate(group_spec())
                for n, t in enumerate(g["paraphrases"], start=1)]  # fmt: skip
    assert rows == expected
    assert wh.sql("SELECT group_id, intent FROM raw.group_intents ORDER BY ALL") == sorted(
        (g["id"], i) for g in group_spec() for i in g["intents"]
    )


def test_the_real_groups_file_loads():
    with Warehouse(":memory:") as wh:
        load_groups(wh, FIXTURES.parent.parent / "studies" / "banking77_groups.toml", "banking77")
        assert wh.sql("SELECT count(*), count(DISTINCT group_id), max(group_row) FROM raw.group_paraphrases") == [
            (100, 25, 24)
        ]


def test_the_requirements_load(wh):
    load_groups(wh, GROUPS, "g")
    result = load_requirements(wh, REQUIREMENTS, "g")
    assert result.status == "loaded"
    cases = case_spec()
    assert wh.sql("SELECT case_id, case_row, name, unwanted_feature FROM raw.control_cases ORDER BY case_row") == [
        (c["id"], row, c["name"], c["unwanted_feature"]) for row, c in enumerate(cases)
    ]
    assert wh.sql("SELECT case_id, feature, weight FROM raw.case_weights ORDER BY ALL") == sorted(
        (c["id"], f, float(w)) for c in cases for f, w in c["positive"].items()
    )
    assert wh.sql("SELECT case_id, intent, role FROM raw.case_intents ORDER BY ALL") == sorted(
        [(c["id"], i, "desired") for c in cases for i in c["desired_intents"]]
        + [(c["id"], i, "unwanted") for c in cases for i in c["unwanted_intents"]]
    )
    assert wh.sql("SELECT group_id, feature, weight FROM raw.group_weights ORDER BY ALL") == sorted(
        (g["id"], f, float(w)) for g in group_spec() for f, w in g["weights"].items()
    )


def snapshot(wh) -> list:
    tables = ["raw.group_paraphrases", "raw.group_intents", "raw.group_weights", "raw.control_cases",
              "raw.case_weights", "raw.case_intents", "meta.sources"]  # fmt: skip
    return [wh.sql(f"SELECT * FROM {t} ORDER BY ALL") for t in tables]


def group_line(text: str, index: int) -> int:
    return [n for n, line in enumerate(text.split("\n"), start=1) if line.startswith("[[group]]")][index]


GROUP_ERRORS = [
    (lambda t: t.replace('id = "G02"', 'id = "G01"'), 1, "group id given twice"),
    (lambda t: t.replace('  "cash withdrawal went wrong",\n', ""), 1, "a group has exactly 4 paraphrases"),
    (lambda t: t.replace('intents = ["top_up_failed", "exchange_rate"]', "intents = []"), 3,
     "intents must be a non-empty list"),
    (lambda t: t.replace('"top_up_failed", "exchange_rate"', '"top_up_failed", "card_arrival"'), 3,
     "an intent is in at most one group"),
    (lambda t: t.replace('"exchange_rate"]', '"exchange_rate", "exchange_rate"]'), 3, "names an intent twice"),
    (lambda t: t.replace('  "my top up failed",', '  "  ",'), 3, "a paraphrase is not a non-empty string"),
    (lambda t: t.replace('id = "G03"', 'id = "G 03"'), 2, "group id contains whitespace"),
    (lambda t: t.replace('name = "Top ups"', 'nmae = "Top ups"'), 3, "unknown key 'nmae'"),
    (lambda t: t.replace('intents = ["pending_card_payment", "card_payment_fee_charged"]\n', ""), 2,
     "[[group]] lacks intents"),
    (lambda t: "groups = 1\n" + t, None, "unexpected top-level 'groups'"),
    (lambda t: t + "[[group\n", None, "not valid TOML"),
]  # fmt: skip


def load_refused(wh, tmp_path, load, fixture: Path, edit) -> tuple[InputError, str]:
    """Load an edited copy of `fixture` over the good one: the error names the file and the rule, and the
    warehouse is unchanged; the error and the edited text."""
    before = snapshot(wh)
    text = edit(fixture.read_text())
    path = tmp_path / fixture.name
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load(wh, path, "g")
    assert caught.value.path == str(path)
    assert snapshot(wh) == before
    return caught.value, text


@pytest.mark.parametrize(("edit", "group", "rule"), GROUP_ERRORS)
def test_group_rules_name_the_file_line_and_rule(wh, tmp_path, edit, group, rule):
    load_groups(wh, GROUPS, "g")
    error, text = load_refused(wh, tmp_path, load_groups, GROUPS, edit)
    assert rule in error.rule + " " + error.detail
    if group is not None:
        assert error.line == group_line(text, group)


def case_line(text: str, index: int) -> int:
    return [n for n, line in enumerate(text.split("\n"), start=1) if line.startswith("[[case]]")][index]


REQUIREMENT_ERRORS = [
    (lambda t: t.replace("weights = { top_up = 1, currency = 0.75 }", "weights = { top_up = 1.5 }"), ("group", 3),
     "a weight must be a number in (0, 1]"),
    (lambda t: t.replace("weights = { top_up = 1, currency = 0.75 }", "weights = { top_up = 0 }"), ("group", 3),
     "a weight must be a number in (0, 1]"),
    (lambda t: t.replace("weights = { top_up = 1, currency = 0.75 }", "weights = { top_up = true }"), ("group", 3),
     "a weight must be a number in (0, 1]"),
    (lambda t: t.replace("weights = { top_up = 1, currency = 0.75 }", "weights = {}"), ("group", 3),
     "must be a non-empty table"),
    (lambda t: t.replace('[[group]]\nid = "G04"\nweights = { top_up = 1, currency = 0.75 }\n', ""), ("group", 2),
     "every group of the groups file has [[group]] weights"),
    (lambda t: t.replace('id = "G04"', 'id = "G05"'), ("group", 3), "a [[group]] that the groups file does not have"),
    (lambda t: t.replace('id = "G04"', 'id = "G03"'), ("group", 3), "group id given twice"),
    (lambda t: t.replace('id = "C2"', 'id = "C1"'), ("case", 1), "case id given twice"),
    (lambda t: t.replace('unwanted_feature = "pending_state"\n', ""), ("case", 1), "[[case]] lacks unwanted_feature"),
    (lambda t: t.replace('unwanted_feature = "pending_state"', 'unwanted_features = "pending_state"'), ("case", 1),
     "unknown key 'unwanted_features'"),
    (lambda t: t.replace('desired_intents = ["exchange_rate"]', 'desired_intents = ["top_up_failed"]'), ("case", 3),
     "an intent is both desired and unwanted"),
    (lambda t: t.replace('desired_intents = ["exchange_rate"]', 'desired_intents = ["exchange_rates"]'), ("case", 3),
     "an intent that no group of the groups file names"),
    (lambda t: t.replace('unwanted_intents = ["top_up_failed"]', "unwanted_intents = []"), ("case", 3),
     "unwanted_intents must be a non-empty list"),
    (lambda t: t.replace('name = "Top ups, excluding failures"', 'name = ""'), ("case", 3),
     "a case's name is not a non-empty string"),
    (lambda t: t.replace("positive = { fees = 1.0 }", "positive = { fees = -1.0 }"), ("case", 4),
     "a weight must be a number in (0, 1]"),
    (lambda t: t[: t.index('[[case]]\nid = "C6"')], ("case", 4), "at least 6 [[case]] tables"),
    (lambda t: t.replace('id = "C3"', "id = 3"), ("case", 2), "case id is not a non-empty string"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "where", "rule"), REQUIREMENT_ERRORS)
def test_requirement_rules_name_the_file_line_and_rule(wh, tmp_path, edit, where, rule):
    load_groups(wh, GROUPS, "g")
    load_requirements(wh, REQUIREMENTS, "g")
    error, text = load_refused(wh, tmp_path, load_requirements, REQUIREMENTS, edit)
    assert rule in error.rule + " " + error.detail
    kind, index = where
    assert error.line == (group_line(text, index) if kind == "group" else case_line(text, index))


def test_requirements_need_the_groups_loaded_first(wh):
    with pytest.raises(InputError, match="has no groups"):
        load_requirements(wh, REQUIREMENTS, "g")


def test_an_unknown_feature_name_is_refused_by_the_audit(tiny, tmp_path):
    with Warehouse(":memory:") as wh:
        wh.sql("INSERT INTO raw.feature_schema VALUES (?, ?, 1, 'card_payment', 'cards', 'q')", [SCHEMA, SCHEMA_SHA])
        load_groups(wh, GROUPS, CORPUS)
        load_requirements(wh, REQUIREMENTS, CORPUS)
        with pytest.raises(AuditError, match="not_null") as caught:
            build(wh, "+requirement_features", BASE)
        assert "card_delivery" in str(caught.value)


# -- E3 ------------------------------------------------------------------------------------------------
def test_phrase_bm25_is_the_existing_bm25_of_the_same_text_as_a_query(tiny):
    wh = tiny.wh
    items = phrases(tiny)
    with wh.writing_inputs():
        wh.con.executemany("INSERT INTO raw.queries VALUES (?, ?, ?, ?)",
                           [(CORPUS, item, row, text) for row, (item, _, text, _) in enumerate(items)])  # fmt: skip
    try:
        build(wh, "+bm25_scores", BASE)
        bm25 = dict(((q, d), s) for q, d, s in wh.sql("SELECT query_row, doc_row, score FROM models.bm25_scores"))
        phrase = wh.sql("SELECT query_key, doc_row, score FROM models.group_phrase_bm25")
        assert len(phrase) == len(items) * DOCUMENTS
        keys = {key: row for row, (_, key, _, _) in enumerate(items)}
        assert all(score == bm25[(keys[key], doc)] for key, doc, score in phrase)  # exactly, to the bit
        assert any(score > 0 for _, _, score in phrase)
        texts = [t for t, _ in tiny.documents]
        for _, key, text, _ in items:
            scores = dict(((d, s) for k, d, s in phrase if k == key))
            assert [scores[d] for d in range(DOCUMENTS)] == pytest.approx(python_bm25(texts, text), abs=1e-9)
    finally:
        with wh.writing_inputs():
            wh.sql("DELETE FROM raw.queries WHERE corpus = ?", [CORPUS])


def test_requirement_scores_match_python(tiny):
    weights, _ = interpretations()
    found = {}
    for system, key, doc, score in tiny.wh.sql(
        "SELECT system, query_key, doc_row, score FROM models.requirement_scores"
    ):
        found.setdefault((system, key), {})[doc] = score
    for item, key, _, group in phrases(tiny):
        for system, requirement in (("interpreted-requirements", weights.get(item, {})),
                                    ("manual-requirements", group["weights"])):  # fmt: skip
            got = [found[(system, key)][d] for d in range(DOCUMENTS)]
            assert got == pytest.approx(python_relevance(tiny.units, requirement), abs=1e-12)
    assert set(found[("interpreted-requirements", 1000 + 10 + 3)].values()) == {0.0}  # G02.3: no weights
    for row, case in enumerate(tiny.cases):
        got = [found[("positive", row)][d] for d in range(DOCUMENTS)]
        assert got == pytest.approx(python_relevance(tiny.units, case["positive"]), abs=1e-12)
    # the tie of two documents with equal features is exact
    assert found[("manual-requirements", 1011)][3] == found[("manual-requirements", 1011)][11]


def test_group_rankings_are_full_and_match_python(tiny):
    oracle = e3_oracle(tiny)
    for system in E3_SYSTEMS:
        for item, key, _, _ in phrases(tiny):
            assert sql_ranking(tiny.wh, "group_rankings", system, key) == oracle[(system, item)], (system, item)
    ranks = tiny.wh.sql("SELECT count(*), count(DISTINCT (system, query_key)), max(rank) FROM models.group_rankings")
    assert ranks == [(3 * 16 * DOCUMENTS, 3 * 16, DOCUMENTS)]


def test_group_judgments_are_the_group_intents(tiny):
    judged = {}
    for row in tiny.parts["e3"]["judgments"]:
        judged.setdefault(row["query_id"], set()).add(row["doc_key"])
        assert row["study"] == "tiny/e3" and row["grade"] == 1
    for order, (item, key, _, group) in enumerate(phrases(tiny)):
        assert judged[item] == relevant_to(tiny, group["intents"])
    orders = {(r["query_id"], r["query_key"], r["query_order"]) for r in tiny.parts["e3"]["judgments"]}
    assert orders == {(item, key, order) for order, (item, key, _, _) in enumerate(phrases(tiny))}


def e3_python_values(tiny) -> dict[tuple[str, str, str], float]:
    oracle = e3_oracle(tiny)
    values = {}
    for item, _, _, group in phrases(tiny):
        relevant = relevant_to(tiny, group["intents"])
        for system in E3_SYSTEMS:
            for measure, value in python_measures(oracle[(system, item)], relevant).items():
                values[(system, item, measure)] = value
    return values


def test_e3_measures_per_phrase_group_and_overall_match_python(tiny):
    expected = e3_python_values(tiny)
    got = {(r["system"], r["query"], r["measure"]): r["value"] for r in tiny.parts["e3"]["query_measures"]}
    assert got.keys() == expected.keys()
    assert [got[k] for k in sorted(got)] == pytest.approx([expected[k] for k in sorted(got)], abs=1e-12)
    groups = {
        (r["system"], r["group_id"], r["measure"]): (r["value"], r["queries"])
        for r in tiny.parts["e3"]["group_results"]
    }
    for group in tiny.groups:
        for system in E3_SYSTEMS:
            for measure in MEASURES:
                mean = np.mean([expected[(system, f"{group['id']}.{n}", measure)] for n in range(1, 5)])
                assert groups[(system, group["id"], measure)] == (pytest.approx(mean, abs=1e-12), 4)
    overall = {
        (r["system"], r["measure"]): r["value"] for r in tiny.parts["e3"]["run_measures"] if r["subset"] == "all"
    }
    for system in E3_SYSTEMS:
        for measure in MEASURES:
            values = [v for (s, _, m), v in expected.items() if s == system and m == measure]
            assert overall[(system, measure)] == pytest.approx(np.mean(values), abs=1e-12)


def test_the_cluster_plan_is_seeded_over_the_groups_in_file_order(tiny):
    plan = tiny.wh.sql("SELECT replicate, draw, item FROM raw.resample_plans WHERE plan = 'tiny_clusters' ORDER BY ALL")
    draws = np.random.default_rng(5).integers(0, 4, size=(REPLICATES, 4))
    assert [r[2] for r in plan] == draws.ravel().tolist()
    assert "loaded 2000 rows into raw.resample_plans as tiny_clusters" in tiny.said[0]


def test_the_cluster_bootstrap_matches_numpy_on_the_same_plan(tiny):
    expected = e3_python_values(tiny)
    items = tiny.wh.sql("SELECT item FROM raw.resample_plans WHERE plan = 'tiny_clusters' ORDER BY replicate, draw")
    plan = np.array([r[0] for r in items]).reshape(REPLICATES, 4)
    found = {(r["system"], r["measure"]): r for r in tiny.parts["e3"]["cluster_bootstrap"]}
    assert len(found) == len(E3_SYSTEMS) * len(MEASURES)
    for system in E3_SYSTEMS:
        for measure in MEASURES:
            by_group = np.array(
                [[expected[(system, f"{g['id']}.{n}", measure)] for n in range(1, 5)] for g in tiny.groups]
            )
            means = by_group[plan].reshape(REPLICATES, -1).mean(axis=1)  # every query of every drawn group
            row = found[(system, measure)]
            assert row["value"] == pytest.approx(by_group.mean(), abs=1e-12)
            assert row["ci_low"] == pytest.approx(np.percentile(means, 2.5), abs=1e-12)
            assert row["ci_high"] == pytest.approx(np.percentile(means, 97.5), abs=1e-12)
            assert (row["replicates"], row["queries"], row["clusters"], row["plan_excess"]) == (REPLICATES, 16, 4, 0)


def test_a_cluster_plan_of_another_size_fails_the_audit(tiny):
    wh = tiny.wh
    with wh.writing_inputs():
        wh.sql("DELETE FROM raw.resample_plans WHERE plan = 'wrong'")
        wh.sql("INSERT INTO raw.resample_plans SELECT 'wrong', r, d, d % 4 FROM range(3) AS a(r), range(5) AS b(d)")
    with pytest.raises(AuditError, match="plan_excess"):
        build(wh, "+cluster_bootstrap", PARTS | {"cluster_plan": "wrong"})


def test_interpretation_rates_keep_every_phrase(tiny):
    _, flags = interpretations()
    rows = {r["group_id"]: r for r in rows_of(tiny.wh, "SELECT * FROM models.group_interpretations")}
    every = rows["all"]
    assert (every["phrases"], every["diagnosed"], every["without_weights"]) == (16, len(flags), 1)
    assert every["review"] == sum(r for _, r, _ in flags.values()) == 3
    assert every["unsupported"] == 1 and every["unsupported_rate"] == 1 / 16 and every["review_rate"] == 3 / 16
    assert every["mean_coverage"] == pytest.approx(np.mean([c for _, _, c in flags.values()]), abs=1e-12)
    assert (rows["G03"]["review"], rows["G03"]["group_row"], rows["G04"]["diagnosed"]) == (2, 2, 3)


# -- E4 ------------------------------------------------------------------------------------------------
def e4_python(tiny) -> dict[str, dict[str, list[int]]]:
    """case -> system -> the Python ranking (the hard filter's only over its survivors)."""
    out = {}
    for case in tiny.cases:
        positive = python_relevance(tiny.units, case["positive"])
        unwanted = [u[case["unwanted_feature"]] for u in tiny.units]
        systems = {}
        for system, penalty in PENALTIES.items():
            scores = [penalised(p, penalty, u) for p, u in zip(positive, unwanted)]
            systems[system] = sorted(range(len(scores)), key=lambda row: (-scores[row], row))
        systems["hard-filter"] = [row for row in systems["positive"] if unwanted[row] <= 200]
        out[case["id"]] = systems
    return out


def test_case_scores_are_the_penalised_positive_scores(tiny):
    by_id = {c["id"]: c for c in tiny.cases}
    for system, case_id, doc, penalty, positive, unwanted, score in tiny.wh.sql(
        "SELECT system, case_id, doc_row, penalty, positive, unwanted_units, score FROM models.case_scores"
    ):
        case = by_id[case_id]
        assert penalty == PENALTIES[system]
        assert unwanted == tiny.units[doc][case["unwanted_feature"]]
        assert positive == pytest.approx(python_relevance(tiny.units, case["positive"])[doc], abs=1e-12)
        assert score == pytest.approx(positive - penalty * unwanted / 1000, abs=1e-12)
        assert round(score * 10**12) == penalised(positive, penalty, unwanted)


def test_case_rankings_filter_and_survival_match_python(tiny):
    oracle = e4_python(tiny)
    for row, case in enumerate(tiny.cases):
        for system, expected in oracle[case["id"]].items():
            assert sql_ranking(tiny.wh, "case_rankings", system, row) == expected, (case["id"], system)
    survival = {r["case_id"]: r for r in rows_of(tiny.wh, "SELECT * FROM models.case_filter")}
    for case in tiny.cases:
        survivors = sum(u[case["unwanted_feature"]] <= 200 for u in tiny.units)
        assert (survival[case["id"]]["survivors"], survival[case["id"]]["documents"]) == (survivors, DOCUMENTS)
        assert survival[case["id"]]["survival"] == survivors / DOCUMENTS and survival[case["id"]]["violations"] == 0
    assert 0 < sum(r["survivors"] for r in survival.values()) < len(tiny.cases) * DOCUMENTS


def test_top10_changes_match_python(tiny):
    oracle = e4_python(tiny)
    found = {(r["case_id"], r["system"]): r for r in rows_of(tiny.wh, "SELECT * FROM models.case_top10_changes")}
    assert len(found) == len(tiny.cases) * 4
    for case in tiny.cases:
        positive = oracle[case["id"]]["positive"]
        for system in ("penalty-0.25", "penalty-0.5", "penalty-1", "hard-filter"):
            ranked = oracle[case["id"]][system]
            rank = {doc: i + 1 for i, doc in enumerate(ranked)}
            top = positive[:10]
            row = found[(case["id"], system)]
            assert row["top10_left"] == sum(doc not in ranked[:10] for doc in top)
            assert row["top10_unranked"] == sum(doc not in rank for doc in top)
            moved = [rank[doc] - (i + 1) for i, doc in enumerate(top) if doc in rank]
            assert row["mean_rank_change"] == pytest.approx(np.mean(moved), abs=1e-12)
    assert any(r["top10_left"] > 0 for r in found.values())


def test_penalised_scores_that_are_equal_in_exact_arithmetic_tie_exactly(tiny):
    # C2 (positive: card_payment alone), penalty 0.5: 0.105 - 0.5 * 0.160 = 0.108 - 0.5 * 0.166
    assert (tiny.units[6]["card_payment"], tiny.units[6]["pending_state"]) == (105, 160)
    assert (tiny.units[39]["card_payment"], tiny.units[39]["pending_state"]) == (108, 166)
    scores = dict(tiny.wh.sql("SELECT doc_row, score FROM models.case_scores WHERE case_id = 'C2' AND "
                              "system = 'penalty-0.5' AND doc_row IN (6, 39)"))  # fmt: skip
    assert scores[6] == scores[39] == 0.025
    ranked = sql_ranking(tiny.wh, "case_rankings", "penalty-0.5", 1)
    assert ranked.index(6) == ranked.index(39) - 1


def test_unwanted_rank_changes_and_semantic_failures_match_python(tiny):
    oracle = e4_python(tiny)
    found = {
        (r["case_id"], r["system"]): r for r in rows_of(tiny.wh, "SELECT * FROM models.case_unwanted_rank_changes")
    }
    failures = tiny.wh.sql(
        "SELECT case_id, rank, doc_key, intent, unwanted_units FROM models.case_semantic_failures ORDER BY ALL"
    )
    expected_failures = []
    for case in tiny.cases:
        unwanted = relevant_to(tiny, case["unwanted_intents"])
        positive = {doc: i + 1 for i, doc in enumerate(oracle[case["id"]]["positive"])}
        for system in ("penalty-0.25", "penalty-0.5", "penalty-1", "hard-filter"):
            rank = {doc: i + 1 for i, doc in enumerate(oracle[case["id"]][system])}
            row = found[(case["id"], system)]
            assert row["unwanted_documents"] == len(unwanted)
            assert row["top10_before"] == sum(positive[d] <= 10 for d in unwanted)
            assert row["top10_after"] == sum(rank.get(d, 99) <= 10 for d in unwanted)
            assert row["unranked"] == sum(d not in rank for d in unwanted)
            moved = [rank[d] - positive[d] for d in unwanted if d in rank]
            assert row["mean_rank_change"] == (pytest.approx(np.mean(moved), abs=1e-12) if moved else None)
        for i, doc in enumerate(oracle[case["id"]]["hard-filter"][:10]):
            if doc in unwanted:
                expected_failures.append((case["id"], i + 1, doc, tiny.documents[doc][1],
                                          tiny.units[doc][case["unwanted_feature"]]))  # fmt: skip
    assert failures == sorted(expected_failures)
    assert ("C1", 2, "declined_cash_withdrawal", 150) in {
        (c, d, i, u) for c, _, d, i, u in failures
    }  # the built-in one


def test_e4_parts_judge_the_same_rankings_by_desired_and_unwanted_intents(tiny):
    oracle = e4_python(tiny)
    for part, key in (("e4", "desired_intents"), ("e4_unwanted", "unwanted_intents")):
        measures = {(r["system"], r["query"], r["measure"]): r["value"] for r in tiny.parts[part]["query_measures"]}
        for case in tiny.cases:
            query = case["id"] + ("/unwanted" if part == "e4_unwanted" else "")
            relevant = relevant_to(tiny, case[key])
            for system, ranked in oracle[case["id"]].items():
                expected = python_measures(ranked, relevant)
                assert measures[(system, query, "P@10")] == pytest.approx(expected["P@10"], abs=1e-12)
                if part == "e4":
                    assert measures[(system, query, "R@10")] == pytest.approx(expected["R@10"], abs=1e-12)


def built_table(wh, model: str) -> str:
    """The store table behind a built table model's view (what the view selects from)."""
    sql = wh.sql("SELECT sql FROM duckdb_views() WHERE database_name = ? AND schema_name = 'models' AND "
                 "view_name = ?", [wh.catalog.strip('"'), model])[0][0]  # fmt: skip
    return sql.split(" FROM ", 1)[1].rstrip(";").strip()


def test_the_penalty_and_filter_audits_pass_and_fail_on_a_built_violation(tiny):
    wh = tiny.wh
    checks = rows_of(wh, "SELECT * FROM models.case_penalty_checks ORDER BY case_id")
    assert all(r["violations"] == 0 and r["comparisons"] == 3 * DOCUMENTS for r in checks) and len(checks) == 6
    project = Project.load(params=BASE)

    def broken_audits(model: str) -> list[str]:
        """The audits of `model` that its SQL, computed over the violation in place, breaks."""
        found = project.models[model]
        wh.sql(f"CREATE OR REPLACE TEMP TABLE violated AS {render(found, BASE)}")
        return [str(audit) for audit in found.audits if wh.sql(audit_sql(found, audit, "violated"))]

    try:  # a built table is sealed in the store: the violation is a view over it in its place
        scores = built_table(wh, "case_scores")
        wh.sql("CREATE OR REPLACE VIEW models.case_scores AS SELECT * REPLACE (CASE WHEN system = 'penalty-1' AND "
               f"case_id = 'C2' AND doc_row = 4 THEN score + 1 ELSE score END AS score) FROM {scores}")  # fmt: skip
        assert any("violations" in audit for audit in broken_audits("case_penalty_checks"))
        with pytest.raises(ModelError, match="needs case_scores, which is missing or out of date"):
            build(wh, "case_penalty_checks", BASE, force=True)  # the runner will not build on a changed table
        high = next(row for row, u in enumerate(tiny.units) if u["pending_state"] > 200)
        rankings = built_table(wh, "case_rankings")
        wh.sql(f"CREATE OR REPLACE VIEW models.case_rankings AS SELECT * FROM {rankings} UNION ALL "
               f"SELECT 'hard-filter', '{CORPUS}', 'C2', 1, {high}, 999, 0.0")  # fmt: skip
        assert any("violations" in audit for audit in broken_audits("case_filter"))
    finally:
        wh.sql("DROP TABLE IF EXISTS violated")
        build(wh, "case_scores case_rankings case_penalty_checks case_filter", BASE, force=True)
    assert rows_of(wh, "SELECT * FROM models.case_penalty_checks ORDER BY case_id") == checks
    assert broken_audits("case_penalty_checks") == [] and broken_audits("case_filter") == []


# -- the writer's parts ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def written(tiny):
    from rankhouse.studies.features import requirements as writer

    study = SimpleNamespace(wh=tiny.wh, protocol=SimpleNamespace(name="tiny", parameters=BASE))
    evaluation = SimpleNamespace(freeze=SimpleNamespace(freeze_id="tiny-1"))
    out = tiny.root / "out"
    out.mkdir()
    return SimpleNamespace(
        e3=writer.e3_results(study, evaluation), e4=writer.e4_results(study, evaluation),
        e3_sections=writer.e3_sections(study, evaluation), e4_sections=writer.e4_sections(study, evaluation),
        files=writer.write_csvs(study, evaluation, out),
    )  # fmt: skip


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_e3_results_are_the_python_means_with_intervals_and_rates(tiny, written):
    expected = e3_python_values(tiny)
    systems = written.e3["systems"]
    assert set(systems) == set(E3_SYSTEMS) and all(set(s) == set(MEASURES) for s in systems.values())
    for system in E3_SYSTEMS:
        for measure in MEASURES:
            entry = systems[system][measure]
            mean = np.mean([v for (s, _, m), v in expected.items() if s == system and m == measure])
            assert entry["value"] == pytest.approx(mean, abs=1e-12)
            assert entry["ci_low"] <= entry["value"] <= entry["ci_high"] or entry["ci_low"] == entry["ci_high"]
            assert (entry["queries"], entry["groups"], entry["replicates"]) == (16, 4, REPLICATES)
    for group in tiny.groups:
        mean = np.mean([expected[("manual-requirements", f"{group['id']}.{n}", "MRR")] for n in range(1, 5)])
        assert written.e3["groups"][group["id"]]["manual-requirements"]["MRR"] == pytest.approx(mean, abs=1e-12)
    rates = written.e3["interpretation"]
    assert (rates["phrases"], rates["review"], rates["unsupported"], rates["without_weights"]) == (16, 3, 1, 1)
    assert written.e3["part"] == "tiny/e3" and written.e3["features"] == "minilm"
    rows = read_csv(written.files[0])
    assert len(rows) == 4 * 3 and rows[0]["group_id"] == "G01"
    g03 = next(r for r in rows if r["group_id"] == "G03" and r["system"] == "phrase-bm25")
    expected_p10 = np.mean([expected[("phrase-bm25", f"G03.{n}", "P@10")] for n in range(1, 5)])
    assert float(g03["p10"]) == pytest.approx(expected_p10, abs=1e-12) and g03["review"] == "2"


def test_e4_results_match_python(tiny, written):
    oracle = e4_python(tiny)
    e4 = written.e4
    assert list(e4["cases"]) == [c["id"] for c in tiny.cases]
    for case in tiny.cases:
        found = e4["cases"][case["id"]]
        for system, ranked in oracle[case["id"]].items():
            desired = python_measures(ranked, relevant_to(tiny, case["desired_intents"]))
            unwanted = python_measures(ranked, relevant_to(tiny, case["unwanted_intents"]))
            entry = found["systems"][system]
            assert entry["desired_P@10"] == pytest.approx(desired["P@10"], abs=1e-12)
            assert entry["desired_R@10"] == pytest.approx(desired["R@10"], abs=1e-12)
            assert entry["unwanted_rate@10"] == pytest.approx(unwanted["P@10"], abs=1e-12)
        survivors = sum(u[case["unwanted_feature"]] <= 200 for u in tiny.units)
        assert found["filter"] == {"documents": DOCUMENTS, "survivors": survivors, "survival": survivors / DOCUMENTS,
                                   "violations": 0}  # fmt: skip
    for system in E4_PENALISED + ("positive",):
        rates = [e4["cases"][c["id"]]["systems"][system]["unwanted_rate@10"] for c in tiny.cases]
        assert e4["systems"][system]["unwanted_rate@10"]["value"] == pytest.approx(np.mean(rates), abs=1e-12)
    assert (e4["hard_filter_violations"], e4["penalty_violations"]) == (0, 0)
    failures = read_csv(written.files[2])
    assert e4["semantic_failures"] == len(failures) >= 1
    cases = read_csv(written.files[1])
    assert len(cases) == len(tiny.cases) * 5
    assert {r["system"] for r in cases} == set(PENALTIES) | {"hard-filter"}


def test_report_sections_show_the_tables_and_checks(written):
    e3 = "\n\n".join(written.e3_sections)
    assert (
        e3.startswith("## E3: broader semantic retrieval") and "| system | P@10 | R@10 | Hit@10 | nDCG@10 | MRR |" in e3
    )
    entry = written.e3["systems"]["manual-requirements"]["nDCG@10"]
    assert f"{entry['value']:.4f} [{entry['ci_low']:.4f}, {entry['ci_high']:.4f}]" in e3
    assert "3 of 16 phrases flagged for review" in e3 and "bootstrap over the groups" in e3
    e4 = "\n\n".join(written.e4_sections)
    assert e4.startswith("## E4: controllability") and "0 hard-filter violations" in e4
    assert f"Semantic failures (reported apart): {written.e4['semantic_failures']} " in e4
    assert "declined_cash_withdrawal" in e4
