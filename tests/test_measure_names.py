"""ir_measures and trec_eval names map to the same canonical measures."""

from __future__ import annotations

import pytest

from rankhouse.errors import RankhouseError
from rankhouse.measures import parse_measures

PAIRS = [
    ("AP", "map"), ("nDCG", "ndcg"), ("nDCG@10", "ndcg_cut.10"), ("P@5", "P.5"), ("R@100", "recall.100"),
    ("RR", "recip_rank"), ("Rprec", "Rprec"), ("Success@10", "success.10"), ("Bpref", "bpref"),
    ("AP@10", "map_cut.10"), ("NumRet", "num_ret"), ("IPrec@0.5", "iprec_at_recall.0.5"),
]  # fmt: skip


@pytest.mark.parametrize(("ir_name", "trec_name"), PAIRS)
def test_both_vocabularies_name_the_same_measure(ir_name, trec_name):
    assert [m.canonical for m in parse_measures([ir_name])] == [m.canonical for m in parse_measures([trec_name])]


def test_labels_follow_the_vocabulary_used():
    assert [m.label for m in parse_measures(["ndcg_cut.10", "nDCG@10", "iprec_at_recall.0.1"])] == [
        "ndcg_cut_10",
        "nDCG@10",
        "iprec_at_recall_0.10",
    ]


def test_comma_lists_and_trec_parameter_lists():
    assert [m.canonical for m in parse_measures(["P.5,10,nDCG@10", "RR"])] == ["P@5", "P@10", "nDCG@10", "RR"]


def test_default_is_trec_eval_official_set():
    labels = [m.label for m in parse_measures(None)]
    assert labels[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert len(labels) == 30


@pytest.mark.parametrize(
    ("name", "message"), [("P@", "unknown"), ("Bpref@5", "no cutoff"), ("map.5", "no parameters"), ("NDCG", "unknown")]
)
def test_bad_names_are_explained(name, message):
    with pytest.raises(RankhouseError, match=message):
        parse_measures([name])
