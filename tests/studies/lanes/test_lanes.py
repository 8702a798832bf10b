"""The lanes study (seed 002): admission on hand-made lanes, chunk boundaries, the three orderings' tie
chains against a plain-Python re-implementation of the seed, the passage cache and its receipts, the
loaders' rules, and the BANKING77 demonstration end to end on a subset (bm25s, pytrec_eval, the encoder
and Python re-computations as oracles)."""

from __future__ import annotations

import json
import math
import random
import re
import tomllib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from clirunner import error_line, rankhouse
from lanes_warehouses import (
    CORPUS,
    OVERLAP,
    SIZE,
    HandScores,
    chunks,
    insert_documents,
    run,
    write_lanes,
    write_topics,
)

from rankhouse.errors import AuditError, InputError, RankhouseError
from rankhouse.paths import ROOT
from rankhouse.studies.lanes.loaders import load_lane_runs, load_narratives, load_passage_cache, load_topic_classes
from rankhouse.studies.lanes.passages import PassageScorer, Scored, latest_receipts, register_scorer, score_passages
from rankhouse.warehouse.dag import Project
from rankhouse.warehouse.portability import portability_problems

MULTIPLIER, SCALE = 2.5, 1.4826


# -- plain-Python oracles of the seed's rules ----------------------------------------------------------
def median(values: list[float]) -> float:
    """quantile_cont(., 0.5): the middle value, or lo + (hi - lo) * 0.5 for an even count."""
    ordered = sorted(values)
    n = len(ordered)
    lo, hi = ordered[(n - 1) // 2], ordered[n // 2]
    return lo + (hi - lo) * 0.5


def robust(values: list[float]) -> tuple[float, float, callable]:
    """(m, MAD, passes) of the seed's rule: >= m + 2.5 * 1.4826 * MAD if MAD > 0, else > m."""
    m = median(values)
    mad = median([abs(v - m) for v in values])
    if mad > 0:
        threshold = m + MULTIPLIER * SCALE * mad
        return m, mad, lambda v: v >= threshold
    return m, mad, lambda v: v > m


def admit(lanes: list[tuple[str, str, str, int, float]]) -> tuple[dict[str, set[str]], set[str]]:
    """Per topic C_t from (topic, lane, doc, source rank, score) rows, and the topics that needed the fallback."""
    by_lane: dict[tuple[str, str], list[tuple[str, int, float]]] = {}
    for topic, lane, doc, rank, score in lanes:
        by_lane.setdefault((topic, lane), []).append((doc, rank, score))
    best: dict[tuple[str, str], int] = {}
    for topic, _, doc, rank, _ in lanes:
        best[topic, doc] = min(rank, best.get((topic, doc), rank))
    core: dict[str, set[str]] = {t: set() for t, *_ in lanes}
    for (topic, _), rows in by_lane.items():
        _, _, passes = robust([s for _, _, s in rows])
        core[topic] |= {d for d, _, s in rows if passes(s)}
    fallback = set()
    for topic, docs in core.items():
        if not docs:
            narrative = by_lane[topic, "narrative"]
            winner = min(narrative, key=lambda r: (-r[2], best[topic, r[0]], r[0].encode("utf-8")))
            docs.add(winner[0])
            fallback.add(topic)
    return core, fallback


def cume_dist(values: dict[str, float]) -> dict[str, Fraction]:
    """Each document's percentile, exactly: the share of documents whose value is at most its own."""
    n = len(values)
    return {d: Fraction(sum(1 for w in values.values() if w <= v), n) for d, v in values.items()}


def orderings(topics: dict[str, dict], lengths: dict[str, int]) -> dict[str, dict[str, list[str]]]:
    """The three orderings per topic from topics[t] = {candidates: {doc: best source rank}, units: [...],
    passages: {(unit, doc, chunk): score}}; lengths: characters per document (for chunk overlaps)."""
    stride = SIZE - OVERLAP
    out: dict[str, dict[str, list[str]]] = {"combo": {}, "breadth": {}, "narrative": {}}
    for topic, spec in topics.items():
        candidates, units, passages = spec["candidates"], spec["units"], spec["passages"]
        percentile = {
            u: cume_dist({d: max(s for (uu, dd, _), s in passages.items() if uu == u and dd == d) for d in candidates})
            for u in units
        }
        subs = [u for u in units if u != "narrative"]
        keys = {}
        for d in candidates:
            narrative = percentile["narrative"][d]
            ps = sorted((percentile[u][d] for u in subs), reverse=True)
            half, best, second = Fraction(1, 2), Fraction(7, 10), Fraction(3, 10)  # exact, as the seed's math
            facet = narrative if not ps else ps[0] if len(ps) == 1 else best * ps[0] + second * ps[1]
            keys[d] = {"narrative": narrative, "combo": half * narrative + half * facet, "supported": 0, "strong": 0}
        for u in subs:
            scores = {(d, c): s for (uu, d, c), s in passages.items() if uu == u}
            _, _, passes = robust(list(scores.values()))
            for d in candidates:
                mine = sorted(((s, c) for (dd, c), s in scores.items() if dd == d), key=lambda x: (-x[0], x[1]))
                kept = []
                for s, c in mine:
                    span = (c * stride, min(c * stride + SIZE, lengths[d]))
                    if all(not (span[0] < k[1][1] and k[1][0] < span[1]) for k in kept) and len(kept) < 3:
                        kept.append((s, span))
                strong = sum(1 for s, _ in kept if passes(s))
                keys[d]["strong"] += strong
                keys[d]["supported"] += strong > 0
        tail = lambda d: (candidates[d], d.encode("utf-8"))  # noqa: E731
        out["combo"][topic] = sorted(candidates, key=lambda d: (-keys[d]["combo"], *tail(d)))
        out["breadth"][topic] = sorted(
            candidates, key=lambda d: (-keys[d]["supported"], -keys[d]["strong"], -keys[d]["combo"], *tail(d))
        )
        out["narrative"][topic] = sorted(candidates, key=lambda d: (-keys[d]["narrative"], *tail(d)))
    return out


# -- building small warehouses -------------------------------------------------------------------------
def admission_warehouse(wh, tmp_path, topics, lanes, documents=None) -> None:
    docs = documents or {d: f"text of {d}" for d in sorted({row[2] for row in lanes})}
    insert_documents(wh, docs)
    load_narratives(wh, write_topics(tmp_path, topics), CORPUS)
    load_lane_runs(wh, write_lanes(tmp_path, lanes), "lanes")
    run(wh, "+lane_topics")


def candidates(wh) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for topic, doc in wh.sql("SELECT topic, doc_id FROM models.lane_candidates"):
        found.setdefault(topic, set()).add(doc)
    return found


# -- admission -------------------------------------------------------------------------------------------
def test_mad_positive_admits_from_the_threshold_inclusive(wh, tmp_path):
    threshold = 3.0 + MULTIPLIER * SCALE * 2.0  # m = 3, MAD = 2 below
    below = math.nextafter(threshold, -math.inf)
    scores = {"a": 0.0, "b": 1.0, "c": 2.0, "d": 3.0, "e": 4.0, "at": threshold, "under": below}
    lanes = [("T", "narrative", d, i + 1, s) for i, (d, s) in enumerate(scores.items())]
    admission_warehouse(wh, tmp_path, {"T": []}, lanes)
    assert wh.sql("SELECT median, mad, threshold, admitted FROM models.lane_statistics") == [(3.0, 2.0, threshold, 1)]
    assert candidates(wh) == {"T": {"at"}}
    assert candidates(wh) == admit(lanes)[0]


def test_mad_zero_admits_only_scores_above_the_median(wh, tmp_path):
    lanes = [("T", "narrative", d, i + 1, s) for i, (d, s) in enumerate({"a": 5.0, "b": 5.0, "c": 5.0, "d": 7.0,
                                                                          "e": 5.0, "f": 4.0}.items())]  # fmt: skip
    lanes += [("T", "facet:x", d, i + 1, 2.0) for i, d in enumerate("abc")]  # MAD 0, nothing above m
    admission_warehouse(wh, tmp_path, {"T": ["x"]}, lanes)
    stats = {lane: rest for lane, *rest in wh.sql("SELECT lane, median, mad, admitted FROM models.lane_statistics")}
    assert stats == {"narrative": [5.0, 0.0, 1], "facet:x": [2.0, 0.0, 0]}
    assert candidates(wh) == {"T": {"d"}}


def test_the_core_is_the_union_of_lanes_with_no_cutoff(wh, tmp_path):
    rng = random.Random(4)
    lanes = []
    for topic, subs in (("T1", ["x", "y"]), ("T2", ["z"])):
        for lane in ["narrative", *(f"facet:{s}" for s in subs)]:
            docs = rng.sample([f"d{i}" for i in range(60)], 40)
            lanes += [(topic, lane, d, r + 1, rng.lognormvariate(0, 1)) for r, d in enumerate(docs)]
    admission_warehouse(wh, tmp_path, {"T1": ["x", "y"], "T2": ["z"]}, lanes)
    expected, fallback = admit(lanes)
    assert candidates(wh) == expected and not fallback
    k = dict(wh.sql("SELECT topic, max(k) FROM models.lane_candidates GROUP BY topic"))
    assert k == {t: len(docs) for t, docs in expected.items()}
    lanes_of = dict(wh.sql("SELECT doc_id, admitting_lanes FROM models.lane_candidates WHERE topic = 'T1'"))
    assert (
        max(lanes_of.values()) >= 1
        and sum(lanes_of.values())
        == wh.sql("SELECT sum(admitted) FROM models.lane_statistics WHERE topic = 'T1'")[0][0]
    )


def test_an_empty_union_keeps_the_narrative_argmax_with_documented_ties(wh, tmp_path):
    lanes = [
        # T1: the highest narrative score wins although its source rank is worse
        ("T1", "narrative", "b", 1, 2.0), ("T1", "narrative", "a", 2, 2.0), ("T1", "narrative", "z", 3, 3.0),
        ("T1", "narrative", "y", 4, 2.0), ("T1", "narrative", "x", 5, 2.0), ("T1", "narrative", "w", 6, 2.0),
        ("T1", "narrative", "v", 7, 2.0), ("T1", "narrative", "u", 8, 2.0),
        # T2: a tie on the score; the best source rank over all lanes decides ("a" is first in its facet lane)
        ("T2", "narrative", "b", 1, 1.0), ("T2", "narrative", "a", 2, 1.0), ("T2", "facet:x", "a", 1, 0.5),
        ("T2", "facet:x", "b", 2, 0.5),
        # T3: a tie on the score and the best rank; UTF-8 byte order of the id decides ("10" < "9" < "a" < "é")
        ("T3", "narrative", "é", 1, 1.0), ("T3", "narrative", "9", 1, 1.0), ("T3", "narrative", "10", 1, 1.0),
        ("T3", "narrative", "a", 1, 1.0),
        # T4: admits normally
        ("T4", "narrative", "a", 1, 9.0), ("T4", "narrative", "b", 2, 1.0), ("T4", "narrative", "c", 3, 1.0),
    ]  # fmt: skip
    admission_warehouse(wh, tmp_path, {"T1": [], "T2": ["x"], "T3": [], "T4": []}, lanes)
    expected, fallback = admit(lanes)
    # T1's z (3.0) is the only value above the median 2.0 (MAD 0), so it is admitted, not a fallback
    assert expected == {"T1": {"z"}, "T2": {"a"}, "T3": {"10"}, "T4": {"a"}} and fallback == {"T2", "T3"}
    assert candidates(wh) == expected
    assert wh.sql("SELECT topic, fallback, k FROM models.lane_topics ORDER BY topic") == [
        ("T1", False, 1), ("T2", True, 1), ("T3", True, 1), ("T4", False, 1)
    ]  # fmt: skip
    assert dict(wh.sql("SELECT topic, admitting_lanes FROM models.lane_candidates")) == {"T1": 1, "T2": 0, "T3": 0,
                                                                                         "T4": 1}  # fmt: skip


def test_fallback_argmax_prefers_the_score_over_the_source_rank(wh, tmp_path):
    # MAD 1 > 0 and nothing reaches 3 + 3.7065: the argmax is "e", the worst source rank
    lanes = [("T", "narrative", d, r, float(r)) for r, d in enumerate("abcde", start=1)]
    admission_warehouse(wh, tmp_path, {"T": []}, lanes)
    assert candidates(wh) == {"T": {"e"}} == admit(lanes)[0]
    assert wh.sql("SELECT fallback, best_source_rank FROM models.lane_candidates") == [(True, 5)]


def test_lanes_must_name_units_and_documents_of_the_corpus(wh, tmp_path):
    insert_documents(wh, {"a": "x", "b": "y"})
    load_narratives(wh, write_topics(tmp_path, {"T": ["x"]}), CORPUS)
    load_lane_runs(wh, write_lanes(tmp_path, [("T", "facet:nope", "a", 1, 1.0), ("T", "narrative", "zz", 1, 1.0)]),
                   "lanes")  # fmt: skip
    with pytest.raises(AuditError) as caught:
        run(wh, "+lane_scores")
    assert "facet:nope" in str(caught.value) and "zz" in str(caught.value)


def test_the_runs_branch_of_lane_scores_is_portable():
    project = Project.load(params={"lane_source": "runs"})
    assert portability_problems(project.models["lane_scores"], {"lane_source": "runs"}) == []
    assert project.references["lane_scores"] == {"models.lane_runs", "models.lane_units", "models.documents"}


# -- chunks ----------------------------------------------------------------------------------------------
def filler_lanes(docs: list[str], fillers: int) -> list[tuple]:
    """A narrative lane that admits exactly `docs` (MAD 0: the fillers at 0 are the median)."""
    rows = [("T", "narrative", f"filler{i}", i + 1, 0.0) for i in range(fillers)]
    return rows + [("T", "narrative", d, fillers + i + 1, 1.0) for i, d in enumerate(docs)]


def test_chunk_boundaries(wh, tmp_path):
    base = "".join(chr(ord("a") + i % 26) for i in range(20_000))
    documents = {
        "short": "a few words",
        "exact": base[:3500],
        "one_more": base[:3501],
        "two_exact": base[:6650],
        "two_plus": base[:6651],
        "long": base[:20_000],
        "unicode": ("é🦆ß" * 1300)[:3600],  # code points, not bytes
    }
    lanes = filler_lanes(list(documents), fillers=len(documents) + 1)
    insert_documents(wh, {**documents, **{f"filler{i}": "x" for i in range(len(documents) + 1)}})
    load_narratives(wh, write_topics(tmp_path, {"T": []}), CORPUS)
    load_lane_runs(wh, write_lanes(tmp_path, lanes), "lanes")
    run(wh, "+lane_chunks")
    found: dict[str, list[tuple]] = {}
    for doc, chunk, start, length, text, count in wh.sql(
        "SELECT doc_id, chunk, start, length, text, chunks FROM models.lane_chunks ORDER BY doc_id, chunk"
    ):
        found.setdefault(doc, []).append((chunk, start, length, text, count))
    assert set(found) == set(documents)
    for doc, text in documents.items():
        expected = chunks(text)
        assert [(c, s, len(t), t, len(expected)) for c, (s, t) in enumerate(expected)] == found[doc], doc
    assert [r[1] for r in found["long"]] == [0, 3150, 6300, 9450, 12600, 15750, 18900]
    assert found["long"][-1][1] + found["long"][-1][2] == 20_000  # the last chunk ends at the end
    assert [len(found[d]) for d in ("exact", "one_more", "two_exact", "two_plus")] == [1, 2, 2, 3]
    assert found["one_more"][1][1:3] == (3150, 351) and found["two_exact"][1][1:3] == (3150, 3500)


# -- orderings -------------------------------------------------------------------------------------------
def random_topics(seed: int):
    """Three topics with 0, 1 and 3 subnarratives; documents of 1 to 7 chunks; grid scores with twins (same
    scores in every unit) at equal and different source ranks, so that every tie level is reached."""
    rng = random.Random(seed)
    documents, lanes, scores = {}, [], {}
    spec = {"T0": [], "T1": ["x"], "T3": ["x", "y", "z"]}
    for topic, subs in spec.items():
        units = ["narrative", *(f"facet:{s}" for s in subs)]
        docs = []
        for i in range(14):
            doc = f"{topic}-{i:02d}"
            length = rng.choice([40, 3500, 3600, 9000, 20_000])
            documents[doc] = f"{doc} " + "".join(rng.choices("abcdefgh ", k=length - len(doc) - 1))
            docs.append(doc)
        twins = {docs[1]: docs[0], docs[3]: docs[2], docs[5]: docs[4]}  # copy of the other's scores
        for twin, original in twins.items():
            documents[twin] = documents[original].replace(original, twin, 1)
        for doc in (d for d in docs if d not in twins):
            for unit in units:
                for c in range(len(chunks(documents[doc]))):
                    hit = rng.random() < 0.25
                    scores[topic, unit, doc, c] = rng.choice([0.8, 0.9]) if hit else rng.choice([0.0, 0.1, 0.2])
        for twin, original in twins.items():
            for unit in units:
                for c in range(len(chunks(documents[original]))):
                    scores[topic, unit, twin, c] = scores[topic, unit, original, c]
        ranks = {d: r + 1 for r, d in enumerate(docs)}
        ranks[docs[1]] = ranks[docs[0]]  # twins at the same source rank: the id decides
        ranks[docs[3]] = ranks[docs[2]] + 5  # twins at different ranks: the rank decides
        fillers = [f"{topic}-filler{i}" for i in range(len(docs) + 1)]
        documents.update(dict.fromkeys(fillers, "filler"))
        lanes += [(topic, "narrative", f, 100 + i, 0.0) for i, f in enumerate(fillers)]
        lanes += [(topic, "narrative", d, ranks[d], 1.0) for d in docs]
    return spec, documents, lanes, scores


@pytest.fixture
def ordered(wh, tmp_path):
    spec, documents, lanes, scores = random_topics(11)
    insert_documents(wh, documents)
    load_narratives(wh, write_topics(tmp_path, spec), CORPUS)
    load_lane_runs(wh, write_lanes(tmp_path, lanes), "lanes")
    run(wh, "+lane_chunks")
    units = {(t, u): text for t, u, text in wh.sql("SELECT topic, unit, text FROM raw.lane_units")}
    table = {}
    for (topic, unit, doc, c), score in scores.items():
        table[units[topic, unit], chunks(documents[doc])[c][1]] = score
    # the same text scored twice must get one score: twins differ in their first characters
    scorer = HandScores(table)
    receipt = score_passages(wh, CORPUS, scorer)
    run(wh, "+lane_orderings +lane_topics")
    return wh, spec, documents, lanes, scores, receipt


def test_orderings_match_the_seed_reimplemented(ordered):
    wh, spec, documents, lanes, scores, receipt = ordered
    core, _ = admit(lanes)
    best = {}
    for topic, _, doc, rank, _ in lanes:
        best[topic, doc] = min(rank, best.get((topic, doc), rank))
    topics = {
        t: {
            "candidates": {d: best[t, d] for d in core[t]},
            "units": ["narrative", *(f"facet:{s}" for s in subs)],
            "passages": {(u, d, c): s for (tt, u, d, c), s in scores.items() if tt == t and d in core[t]},
        }
        for t, subs in spec.items()
    }
    expected = orderings(topics, {d: len(text) for d, text in documents.items()})
    for method, by_topic in expected.items():
        for topic, docs in by_topic.items():
            ours = [d for (d,) in wh.sql("SELECT doc_id FROM models.lane_orderings WHERE method = ? AND topic = ? "
                                         "ORDER BY rank", [method, topic])]  # fmt: skip
            assert ours == docs, (method, topic)
    k = dict(wh.sql("SELECT topic, k FROM models.lane_topics"))
    assert k == {t: len(core[t]) for t in spec} and receipt.cache_misses == receipt.requested


def test_every_tie_level_is_exercised(ordered):
    """Adjacent pairs decided at each level of each order exist in the fixture (else the test above proves less)."""
    wh = ordered[0]
    rows = wh.sql(
        "SELECT method, topic, rank, doc_id, combo, narrative_percentile, supported, strong_passages, best_source_rank "
        "FROM models.lane_orderings ORDER BY method, topic, rank"
    )
    keys = {
        "combo": lambda r: [-r[4], r[8], r[3]],
        "narrative": lambda r: [-r[5], r[8], r[3]],
        "breadth": lambda r: [-r[6], -r[7], -r[4], r[8], r[3]],
    }
    decided: dict[str, set[int]] = {m: set() for m in keys}
    for a, b in zip(rows, rows[1:], strict=False):
        if a[:2] != b[:2]:
            continue
        ka, kb = keys[a[0]](a), keys[a[0]](b)
        level = next(i for i, (x, y) in enumerate(zip(ka, kb, strict=True)) if x != y)
        assert ka < kb
        decided[a[0]].add(level)
    assert decided == {"combo": {0, 1, 2}, "narrative": {0, 1, 2}, "breadth": {0, 1, 2, 3, 4}}


def test_candidate_sets_and_k_are_the_same_in_all_orderings(ordered):
    wh = ordered[0]
    sets = wh.sql(
        "SELECT method, topic, list_sort(list(doc_id)), max(k), count(*) FROM models.lane_orderings GROUP BY ALL"
    )
    by_topic: dict[str, set] = {}
    for _, topic, docs, k, n in sets:
        by_topic.setdefault(topic, set()).add((tuple(docs), k, n))
    assert all(len(v) == 1 and next(iter(v))[1] == next(iter(v))[2] for v in by_topic.values())
    scores = wh.sql("SELECT count(*) FROM models.lane_orderings WHERE score <> k + 1 - rank")
    assert scores == [(0,)]


def test_overlapping_passages_are_suppressed_and_at_most_three_kept(ordered):
    wh, _, documents, *_ = ordered
    kept: dict[tuple, list[int]] = {}
    for topic, unit, doc, chunk in wh.sql(
        "SELECT topic, unit, doc_id, chunk FROM models.passage_support WHERE kept IS NOT NULL ORDER BY kept"
    ):
        kept.setdefault((topic, unit, doc), []).append(chunk)
    assert max(len(v) for v in kept.values()) == 3
    for (_, _, doc), picked in kept.items():
        spans = [(c * 3150, min(c * 3150 + 3500, len(documents[doc]))) for c in picked]
        assert all(not (a[0] < b[1] and b[0] < a[1]) for i, a in enumerate(spans) for b in spans[i + 1 :])


def test_nms_keeps_the_best_then_the_best_that_overlaps_no_kept_one(wh, tmp_path):
    text = "".join(chr(ord("a") + i % 26) for i in range(10_000))  # chunks at 0, 3150, 6300, 9450
    documents = {"long": text, **{f"d{i}": f"short {i}" for i in range(6)}}
    lanes = filler_lanes(list(documents), fillers=len(documents) + 1)
    insert_documents(wh, {**documents, **{f"filler{i}": "x" for i in range(len(documents) + 1)}})
    load_narratives(wh, write_topics(tmp_path, {"T": ["x"]}), CORPUS)
    load_lane_runs(wh, write_lanes(tmp_path, lanes), "lanes")
    cache = [f"T facet:x long {c} {s}" for c, s in enumerate([0.8, 0.9, 0.85, 0.7])]
    cache += [f"T facet:x d{i} 0 0.1" for i in range(6)] + [f"T narrative {d} 0 0.5" for d in documents if d != "long"]
    cache += [f"T narrative long {c} 0.5" for c in range(4)]
    (tmp_path / "cache.tsv").write_text("\n".join(cache) + "\n")
    load_passage_cache(wh, tmp_path / "cache.tsv", "file")
    run(wh, "+lane_chunks")
    score_passages(wh, CORPUS, "file")
    run(wh, "+lane_orderings")
    rows = wh.sql("SELECT chunk, kept, strong FROM models.passage_support WHERE doc_id = 'long' ORDER BY chunk")
    assert rows == [(0, None, True), (1, 1, True), (2, None, True), (3, 2, True)]
    assert wh.sql("SELECT supported, strong_passages FROM models.lane_orderings WHERE doc_id = 'long' LIMIT 1") == [
        (1, 2)
    ]


# -- the passage cache -----------------------------------------------------------------------------------
def test_cache_first_then_the_scorer_and_receipts(wh, tmp_path):
    documents = {f"d{i}": f"document number {i}" for i in range(4)}
    lanes = filler_lanes(list(documents), fillers=5)
    insert_documents(wh, {**documents, **{f"filler{i}": "x" for i in range(5)}})
    load_narratives(wh, write_topics(tmp_path, {"T": ["x"]}), CORPUS)
    load_lane_runs(wh, write_lanes(tmp_path, lanes), "lanes")
    (tmp_path / "cache.tsv").write_text("T narrative d0 0 0.25\nT facet:x d0 0 0.5\nT narrative d1 0 0.75\n")
    load_passage_cache(wh, tmp_path / "cache.tsv", "lengths")

    class Lengths(PassageScorer):
        name = "lengths"
        fingerprint = "lengths-1"
        calls: list[int] = []

        def score(self, wh, units, chunks, progress=None) -> Scored:  # noqa: ANN001
            self.calls.append(len(units))
            return Scored(np.array([len(u) / 100 + len(c) / 1000 for u, c in zip(units, chunks, strict=True)]),
                          len(set(units) | set(chunks)), 1)  # fmt: skip

    register_scorer("lengths", Lengths)
    run(wh, "+lane_chunks")
    first = score_passages(wh, CORPUS, "lengths")
    assert (first.requested, first.cache_hits, first.cache_misses, first.model_batches) == (8, 3, 5, 1)
    scores = dict(((u, d), s) for u, d, s in wh.sql("SELECT unit, doc_id, score FROM raw.passage_scores"))
    assert scores["narrative", "d0"] == 0.25 and scores["facet:x", "d0"] == 0.5 and scores["narrative", "d1"] == 0.75
    assert scores["narrative", "d2"] == len("narrative of T") / 100 + len("document number 2") / 1000
    again = score_passages(wh, CORPUS, "lengths")  # what the scorer wrote back is now in the cache
    assert (again.cache_hits, again.cache_misses, again.model_batches, again.status) == (8, 0, 0, "unchanged")
    assert Lengths.calls == [5]
    scoring, topics = latest_receipts(wh, CORPUS)
    assert scoring["cache_hits"] == 8 and topics == {"T": {"requested": 8, "cache_hits": 8, "cache_misses": 0}}
    # a changed unit text is a miss for the scorer's own rows, not for the file's (trusted as given)
    new_topic = {"topic": "T", "narrative": "a new narrative", "subnarratives": [{"name": "x", "text": "x"}]}
    (tmp_path / "topics.jsonl").write_text(json.dumps(new_topic) + "\n")
    load_narratives(wh, tmp_path / "topics.jsonl", CORPUS)
    run(wh, "+lane_chunks")
    changed = score_passages(wh, CORPUS, "lengths")
    assert (changed.cache_hits, changed.cache_misses, changed.status) == (3, 5, "replaced")


def test_misses_without_a_scorer_are_an_error(wh, tmp_path):
    lanes = filler_lanes(["d0"], fillers=2)
    insert_documents(wh, {"d0": "text", "filler0": "x", "filler1": "x"})
    load_narratives(wh, write_topics(tmp_path, {"T": []}), CORPUS)
    load_lane_runs(wh, write_lanes(tmp_path, lanes), "lanes")
    run(wh, "+lane_chunks")
    with pytest.raises(RankhouseError, match="1 passage scores are not in the cache of scorer 'nobody'"):
        score_passages(wh, CORPUS, "nobody")
    assert wh.sql("SELECT count(*) FROM raw.passage_scores") == [(0,)]
    with pytest.raises(AuditError, match="model unit_scores: audit"):
        run(wh, "+unit_scores")


# -- loaders ---------------------------------------------------------------------------------------------
NARRATIVE_CASES = [
    ('{"topic": "a b", "narrative": "n", "subnarratives": []}', 1, "topic id contains whitespace"),
    ('{"topic": "a", "narrative": " ", "subnarratives": []}', 1, "empty narrative"),
    ('{"topic": "a", "narrative": "n", "subnarratives": [{"name": "x y", "text": "t"}]}', 1,
     "subnarrative name contains whitespace"),
    ('{"topic": "a", "narrative": "n", "subnarratives": [{"name": "x", "text": "t"}, {"name": "x", "text": "u"}]}',
     1, "subnarrative name given twice in this topic"),
    ('{"topic": "a", "narrative": "n", "subnarratives": [{"name": "x", "text": ""}]}', 1, "empty subnarrative text"),
    ('{"topic": "a", "narrative": "n", "subnarratives": []}\n{"topic": "a", "narrative": "m", "subnarratives": []}',
     2, "topic id given twice"),
    ('{"topic": "a", "narrative": "n"}', 1, "missing subnarratives"),
    ('{"topic": "a", "narrative": "n", "subnarratives": [], "intents": []}', 1, "unexpected key intents"),
    ("not json", 1, "malformed JSON"),
    ("", 1, "no topics in the file"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "rule"), NARRATIVE_CASES)
def test_narrative_rules(wh, tmp_path, text, line, rule):
    path = tmp_path / "topics.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(InputError) as caught:
        load_narratives(wh, path, CORPUS)
    assert (caught.value.line, caught.value.rule) == (line, rule)
    assert wh.sql("SELECT count(*) FROM raw.lane_units") == [(0,)] and wh.sql("SELECT count(*) FROM raw.queries") == [
        (0,)
    ]


def test_toml_groups_give_units_and_queries(wh):
    result = load_narratives(wh, ROOT / "studies" / "banking77_groups.toml", "b")
    groups = tomllib.loads((ROOT / "studies" / "banking77_groups.toml").read_text())["group"]
    assert result.rows == sum(1 + len(g["subnarrative"]) for g in groups) == 102
    units = wh.sql("SELECT topic, unit, unit_row, text, qid FROM raw.lane_units WHERE topic = 'G01' ORDER BY unit_row")
    assert units[0] == ("G01", "narrative", 0, groups[0]["narrative"], "G01/narrative")
    assert [u[1] for u in units[1:]] == [f"facet:{s['name']}" for s in groups[0]["subnarrative"]]
    queries = wh.sql("SELECT qid, row_index, text FROM raw.queries WHERE corpus = 'b' ORDER BY row_index")
    assert [q[1] for q in queries] == list(range(102)) and queries[0][2] == groups[0]["narrative"]
    classes = load_topic_classes(wh, ROOT / "studies" / "banking77_groups.toml", "b")
    assert classes.rows == 77 and classes.table == "topic_classes"


def test_toml_rules_name_the_group_line(wh, tmp_path):
    path = tmp_path / "groups.toml"
    path.write_text('[[group]]\nid = "A"\nnarrative = "n"\n\n[[group]]\nid = "A"\nnarrative = "m"\n')
    with pytest.raises(InputError) as caught:
        load_narratives(wh, path, CORPUS)
    assert (caught.value.line, caught.value.rule) == (5, "topic id given twice")
    path.write_text('[[group]]\nid = "A"\nnarrative = "n"\n')
    with pytest.raises(InputError, match="topic has no classes"):
        load_topic_classes(wh, path, CORPUS)


def test_narratives_refuse_a_corpus_with_other_queries(wh, tmp_path):
    from rankhouse.loaders import load_queries

    (tmp_path / "q.csv").write_text("text,category\nhello,x\n")
    load_queries(wh, tmp_path / "q.csv", CORPUS)
    with pytest.raises(InputError, match="already has queries from another file"):
        load_narratives(wh, write_topics(tmp_path, {"T": []}), CORPUS)
    assert wh.sql("SELECT count(*) FROM raw.queries") == [(1,)]


LANE_CASES = [
    ("T Q0 a 1 1.0 narrative\nT Q0 b 2 1.0\n", 2, "expected 6 fields: topic Q0 docno rank score lane"),
    ("T Q0 a 1.5 1.0 narrative\n", 1, "rank is not a whole number"),
    ("T Q0 a 0 1.0 narrative\n", 1, "rank must be at least 1"),
    ("T Q0 a 1 x narrative\n", 1, "score is not a number"),
    ("T Q0 a 1 NaN narrative\n", 1, "score is NaN or infinite"),
    ("T Q0 a 1 1.0 facet\n", 1, "lane (the tag) must be narrative or facet:<subnarrative>"),
    ("T Q0 a 1 1.0 narrative\nT Q0 a 1 2.0 facet:x\nT Q0 a 2 1.0 narrative\n", 3,
     "duplicate document in this lane of this topic"),
    ("# only a comment\n", 1, "no lane run lines in the file"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "rule"), LANE_CASES)
def test_lane_run_rules(wh, tmp_path, text, line, rule):
    (tmp_path / "lanes.run").write_text(text)
    with pytest.raises(InputError) as caught:
        load_lane_runs(wh, tmp_path / "lanes.run", "lanes")
    assert (caught.value.line, caught.value.rule) == (line, rule)
    assert wh.sql("SELECT count(*) FROM raw.lane_runs") == [(0,)]


CACHE_CASES = [
    ("T narrative a 0\n", 1, "expected 5 fields: topic unit docno chunk score"),
    ("T topic a 0 0.5\n", 1, "unit must be narrative or facet:<subnarrative>"),
    ("T narrative a -1 0.5\n", 1, "chunk must be at least 0"),
    ("T narrative a 0.5 0.5\n", 1, "chunk is not a whole number"),
    ("T narrative a 0 inf\n", 1, "score is NaN or infinite"),
    ("T narrative a 0 0.5\nT narrative a 0 0.6\n", 2, "passage scored twice in this file"),
]


@pytest.mark.parametrize(("text", "line", "rule"), CACHE_CASES)
def test_passage_cache_rules(wh, tmp_path, text, line, rule):
    (tmp_path / "cache.tsv").write_text(text)
    with pytest.raises(InputError) as caught:
        load_passage_cache(wh, tmp_path / "cache.tsv", "s")
    assert (caught.value.line, caught.value.rule) == (line, rule)
    assert wh.sql("SELECT count(*) FROM raw.passage_score_cache") == [(0,)]


def test_exported_lanes_load_back_to_the_same_core(wh, tmp_path):
    rng = random.Random(9)
    lanes = [("T", lane, f"d{i}", i + 1, round(rng.expovariate(1), 3)) for lane in ("narrative", "facet:x")
             for i in range(30)]  # fmt: skip
    admission_warehouse(wh, tmp_path, {"T": ["x"]}, lanes)
    run(wh, "+lane_topics")
    from rankhouse.studies.lanes.runs import write_lanes as export_lanes

    export_lanes(wh, CORPUS, tmp_path / "again.run")
    load_lane_runs(wh, tmp_path / "again.run", "again")
    before = candidates(wh)
    run(wh, "+lane_candidates", lane_set="again")
    assert candidates(wh) == before == admit(lanes)[0]


# -- the demonstration on BANKING77 (a subset of the training messages) ----------------------------------


def tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


@pytest.fixture
def demo(lanes_subset_study):
    """The lanes study on every 8th BANKING77 training message (conftest.lanes_subset_study)."""
    return lanes_subset_study


def test_demo_lanes_are_bm25_top_1000_of_each_unit(demo):
    import bm25s

    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index([tokens(r["text"]) for r in demo.train], show_progress=False)
    units = {(g["id"], "narrative"): g["narrative"] for g in demo.groups}
    units |= {(g["id"], f"facet:{s['name']}"): s["text"] for g in demo.groups for s in g["subnarrative"]}
    ours: dict[tuple, dict[str, tuple]] = {}
    for topic, lane, doc, score, rank in demo.wh.sql(
        "SELECT topic, lane, doc_id, score, source_rank FROM models.lane_scores"
    ):
        ours.setdefault((topic, lane), {})[doc] = (score, rank)
    assert set(ours) == set(units)
    for key, text in units.items():
        expected = retriever.get_scores(list(dict.fromkeys(tokens(text)))) * (1.2 + 1)  # bm25s omits (k1 + 1)
        lane = ours[key]
        for doc, (score, _) in lane.items():
            assert score == pytest.approx(expected[int(doc)], rel=1e-6), (key, doc)
        order = sorted(lane, key=lambda d: (-lane[d][0], int(d)))  # ties by row index
        assert [lane[d][1] for d in order] == list(range(1, len(lane) + 1))
        matching = np.flatnonzero(expected > 0)
        assert len(lane) == min(1000, len(matching))
        floor = min(score for score, _ in lane.values())
        outside = [d for d in matching if str(d) not in lane]
        assert all(expected[d] <= floor * (1 + 1e-6) for d in outside), key


def lane_rows(path: Path) -> list[tuple[str, str, str, int, float]]:
    rows = []
    for line in path.read_text().splitlines():
        topic, _, doc, rank, score, lane = line.split()
        rows.append((topic, lane, doc, int(rank), float(score)))
    return rows


def run_file(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        topic, _, doc, *_ = line.split()
        found.setdefault(topic, []).append(doc)
    return found


def test_demo_core_matches_admission_recomputed_from_the_lane_file(demo):
    core, fallback = admit(lane_rows(demo.out / "lanes.run"))
    for method in ("combo", "breadth", "narrative"):
        assert {t: set(d) for t, d in run_file(demo.out / "runs" / f"{method}.run").items()} == core
    c = demo.results["candidates"]
    k = [len(v) for v in core.values()]
    assert (c["k_min"], c["k_max"], c["k_distinct"], c["fallback_topics"]) == (min(k), max(k), len(set(k)),
                                                                                len(fallback))  # fmt: skip
    assert c["topics"] == 25


def test_demo_orderings_match_the_seed_reimplemented(demo):
    lanes = lane_rows(demo.out / "lanes.run")
    core, _ = admit(lanes)
    best = {}
    for topic, _, doc, rank, _ in lanes:
        best[topic, doc] = min(rank, best.get((topic, doc), rank))
    passages: dict[str, dict] = {}
    for topic, unit, doc, chunk, score in demo.wh.sql(
        "SELECT topic, unit, doc_id, chunk, score FROM raw.passage_scores"
    ):
        passages.setdefault(topic, {})[unit, doc, chunk] = score
    topics = {
        g["id"]: {
            "candidates": {d: best[g["id"], d] for d in core[g["id"]]},
            "units": ["narrative", *(f"facet:{s['name']}" for s in g["subnarrative"])],
            "passages": passages[g["id"]],
        }
        for g in demo.groups
    }
    expected = orderings(topics, {str(row): len(r["text"]) for row, r in enumerate(demo.train)})
    for method, by_topic in expected.items():
        assert run_file(demo.out / "runs" / f"{method}.run") == by_topic, method


def test_demo_passage_scores_are_minilm_cosines(demo):
    from rankhouse.encode import Encoder

    sample = demo.wh.sql(
        "SELECT u.text, d.text, p.score FROM raw.passage_scores AS p "
        "JOIN raw.lane_units AS u ON u.corpus = p.corpus AND u.topic = p.topic AND u.unit = p.unit "
        "JOIN raw.documents AS d ON d.corpus = p.corpus AND d.doc_id = p.doc_id "
        "ORDER BY p.topic, p.unit, p.doc_id LIMIT 40"
    )
    encoder = Encoder()
    left = encoder.encode([s[0] for s in sample]).astype(np.float64)
    right = encoder.encode([s[1] for s in sample]).astype(np.float64)
    assert np.allclose((left * right).sum(axis=1), [s[2] for s in sample], atol=1e-6)
    assert demo.wh.sql("SELECT max(chunks) FROM models.lane_chunks") == [(1,)]  # short messages: one chunk each


def test_demo_measures_match_pytrec_eval(demo):
    import pytrec_eval

    by_intent: dict[str, list[str]] = {}
    for row, record in enumerate(demo.train):
        by_intent.setdefault(record["category"], []).append(str(row))
    qrels = {g["id"]: {d: 1 for i in g["intents"] for d in by_intent.get(i, [])} for g in demo.groups}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"P.10", "recall.10", "ndcg_cut.10", "recip_rank"})
    for method in ("combo", "breadth", "narrative"):
        run: dict[str, dict[str, float]] = {}
        for line in (demo.out / "runs" / f"{method}.run").read_text().splitlines():
            topic, _, doc, _, score, _ = line.split()
            run.setdefault(topic, {})[doc] = float(score)
        per_topic = evaluator.evaluate(run)
        assert len(per_topic) == 25
        ours = demo.results["methods"][method]
        for measure, key in (("P@10", "P_10"), ("R@10", "recall_10"), ("nDCG@10", "ndcg_cut_10"), ("RR", "recip_rank")):
            assert ours[measure]["value"] == pytest.approx(np.mean([v[key] for v in per_topic.values()]), abs=1e-12)
            assert ours[measure]["queries"] == 25


def test_demo_outputs_validate_and_the_manifest_hashes_them(demo):
    import hashlib

    from rankhouse.runfiles import validate_runs

    runs = sorted((demo.out / "runs").glob("*.run"))
    assert [p.name for p in runs] == ["breadth.run", "combo.run", "narrative.run"]
    assert validate_runs(runs, r"[0-9]+") == []
    manifest = json.loads((demo.out / "manifest.json").read_text())
    for name, entry in manifest["outputs"].items():
        assert hashlib.sha256((demo.out / name).read_bytes()).hexdigest() == entry["sha256"], name
    assert set(manifest["outputs"]) == {"results.json", "per_query.csv", "k_distribution.csv", "lanes.run",
                                        "runs/combo.run", "runs/breadth.run", "runs/narrative.run"}  # fmt: skip
    for key, entry in manifest["inputs"].items():
        assert hashlib.sha256(Path(entry["path"]).read_bytes()).hexdigest() == entry["sha256"], key
    assert manifest["validation"]["problems"] == [] and manifest["freeze_id"] == demo.results["freeze_id"]
    topics = manifest["topics"]
    assert len(topics) == 25 and all(
        t["cache_hits"] + t["cache_misses"] == t["passage_scores"] for t in topics.values()
    )
    assert all(t["k"] == len(run_file(runs[0])[name]) for name, t in topics.items())
    assert sum(t["passage_scores"] for t in topics.values()) == manifest["passage_scoring"]["requested"]
    assert all(sum(t["admitted_per_lane"].values()) >= 1 for t in topics.values())


def test_demo_replay_reads_every_score_from_the_cache(demo):
    demo.study.prepare()
    scoring, topics = latest_receipts(demo.wh, "banking77_lanes")
    assert scoring["cache_misses"] == 0 and scoring["model_batches"] == 0 and scoring["texts_encoded"] == 0
    assert scoring["cache_hits"] == scoring["requested"] > 0
    assert demo.study.verify(demo.study.freezes()[-1]) == []


# -- what the writer reads: checked when the protocol is read ----------------------------------------------

STAGES = {
    "no candidate_summary": (
        ('prepare = "+lane_orderings +candidate_summary"', 'prepare = "+lane_orderings"'),
        "reads models.lane_topics, models.lane_statistics, models.candidate_summary, which no stage builds: "
        "add +lane_topics +lane_statistics +candidate_summary to [stages] prepare",
    ),
    "no lane_query_metrics": (
        ('evaluate = "+lane_metrics +lane_query_metrics"', 'evaluate = "+lane_metrics"'),
        "reads results.lane_query_metrics, which the evaluate stage does not build: add +lane_query_metrics to "
        "[stages] evaluate",
    ),
}


@pytest.mark.parametrize("case", sorted(STAGES))
@pytest.mark.parametrize("command", ["run", "prepare"])
def test_a_protocol_whose_stages_leave_out_what_its_writer_reads_is_refused_before_anything_is_written(
    tmp_path, case, command
):

    from conftest import lanes_subset_protocol

    (old, new), problem = STAGES[case]
    protocol, _ = lanes_subset_protocol(tmp_path)
    assert old in protocol.read_text()
    protocol.write_text(protocol.read_text().replace(old, new))
    before = sorted(p.name for p in tmp_path.iterdir())
    done = rankhouse("study", command, protocol, "--db", tmp_path / "w.duckdb")
    assert error_line(done) == f"error: protocol {protocol}: writer lanes {problem}" and done.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no warehouse, freeze or output


def test_a_lanes_protocol_without_r10_writes_the_measures_it_asks_for(tmp_path):
    """Measures P@10, nDCG@10, RR and AP (no R@10): the study runs to its outputs; per_query.csv has the
    asked-for columns, each equal to the recorded study's (tests/recorded/lanes_subset), and no R@10;
    results.json and the summary table have exactly the asked-for measures."""
    import csv

    from conftest import lanes_subset_protocol
    from recorded_outputs import RECORDED

    from rankhouse.study import Protocol, Study
    from rankhouse.study.outputs import check_protocol, summary_table, write_outputs
    from rankhouse.warehouse import Warehouse

    protocol, _ = lanes_subset_protocol(tmp_path)
    text = protocol.read_text()
    asked = 'measures = ["P@10", "nDCG@10", "RR", "AP"]'
    protocol.write_text(text.replace('measures = ["P@10", "R@10", "nDCG@10", "RR"]', asked))
    loaded = Protocol.load(protocol)
    check_protocol(loaded)
    with Warehouse(tmp_path / "w.duckdb") as wh:
        study = Study(loaded, wh, tmp_path / "freezes")
        evaluation = study.run()
        write_outputs(study, evaluation, tmp_path / "out")
        table = summary_table(study, evaluation).splitlines()
    assert table[0].split() == ["ordering", "P@10", "nDCG@10", "RR", "AP"]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert all(sorted(m) == ["AP", "P@10", "RR", "nDCG@10"] for m in results["methods"].values())
    with (tmp_path / "out" / "per_query.csv").open() as handle:
        ours = list(csv.DictReader(handle))
    with (RECORDED / "lanes_subset" / "per_query.csv").open() as handle:
        recorded = list(csv.DictReader(handle))
    assert list(ours[0]) == ["method", "topic", "relevant", "retrieved", "P@10", "nDCG@10", "RR"]
    assert len(ours) == len(recorded) == 75
    for row, old in zip(ours, recorded):
        assert [row[k] for k in ("method", "topic", "relevant", "retrieved")] == [
            old[k] for k in ("method", "topic", "relevant", "retrieved")
        ]
        for measure in ("P@10", "nDCG@10", "RR"):
            assert float(row[measure]) == pytest.approx(float(old[measure]), rel=1e-12), (row["topic"], measure)
