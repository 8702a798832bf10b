"""ir_measures and trec_eval names map to the same canonical measures."""

from __future__ import annotations

import re

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


# -- every trec_eval measure, its parameters and groups ------------------------------------------------

TREC_PARAMETERS = [
    ("rbp", "rbp", "RBP(p=0.9)"), ("rbp.p=0.8", "rbp_p=0.8", "RBP(p=0.8)"), ("RBP", "RBP", "RBP(p=0.8)"),
    ("RBP(p=0.95)", "RBP(p=0.95)", "RBP(p=0.95)"), ("rbp_resid.p=0.5", "rbp_resid_p=0.5", "rbp_resid(p=0.5)"),
    ("set_F", "set_F", "SetF"), ("set_F.2", "set_F_2", "SetF(beta=2.0)"), ("SetF(beta=1)", "SetF(beta=1)", "SetF"),
    ("set_P", "set_P", "SetP"), ("set_relative_P", "set_relative_P", "SetP(relative=True)"),
    ("set_recall", "set_recall", "SetR"), ("set_map", "set_map", "SetAP"), ("infAP", "infAP", "infAP"),
    ("ndcg.1=3,2=9,4=4.5", "ndcg_1=3,2=9,4=4.5", "nDCG(gains={1:3.0,2:9.0,4:4.5})"),
    ("nDCG(gains={2:9,1:3})@10", "nDCG(gains={2:9,1:3})@10", "nDCG(gains={1:3.0,2:9.0})@10"),
    ("G.1=2", "G_1=2", "G(gains={1:2.0})"), ("Rndcg", "Rndcg", "Rndcg"), ("ndcg_rel", "ndcg_rel", "ndcg_rel"),
    ("utility", "utility", "utility"), ("utility.2,-1,0,0", "utility_2,-1,0,0", "utility(weights=[2.0,-1.0,0.0,0.0])"),
    ("11pt_avg..25,.5,.75", "11pt_avg_.25,.5,.75", "11pt_avg(levels=[0.25,0.5,0.75])"),
    ("relstring", "relstring", "relstring@10"), ("relstring.20", "relstring_20", "relstring@20"),
    ("unj.5", "unj_5", "unj@5"), ("relative_P.7", "relative_P_7", "relative_P@7"),
    ("Rprec_mult.1.5", "Rprec_mult_1.50", "Rprec_mult@1.5"), ("gm_bpref", "gm_bpref", "gm_bpref"),
    ("num_nonrel_judged_ret", "num_nonrel_judged_ret", "num_nonrel_judged_ret"), ("binG", "binG", "binG"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "label", "canonical"), TREC_PARAMETERS)
def test_trec_eval_measures_and_parameters_have_their_labels_and_canonical_names(name, label, canonical):
    [measure] = parse_measures([name])
    assert (measure.label, measure.canonical) == (label, canonical)
    assert [m.canonical for m in parse_measures([canonical])] == [canonical]  # a canonical name reads as itself


def test_a_parameter_list_continues_its_measure():
    found = [m.label for m in parse_measures(["utility.2,-1,0,0,ndcg.1=3,2=9", "Rprec_mult.5.0,0.2,0.35"])]
    assert found == ["utility_2,-1,0,0", "ndcg_1=3,2=9", "Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"]


def test_trec_eval_groups_in_trec_eval_order():
    every = [m.label for m in parse_measures(["all_trec"])]
    assert len(every) == 100 and every[:5] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret"]
    assert every[-5:] == ["rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"]
    assert [m.label for m in parse_measures(["set"])] == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_relative_P", "set_recall",
        "set_map", "set_F",
    ]  # fmt: skip
    # a group's measure given with parameters takes them, in the group's place (trec_eval -m all_trec -m relstring.20)
    with_params = [m.label for m in parse_measures(["all_trec", "relstring.20"])]
    assert "relstring" not in with_params and with_params.index("relstring_20") == every.index("relstring")
    assert len(with_params) == 100


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("rbp.1=2", "rbp takes p=..., the persistence"), ("RBP(p=1)", "p is a persistence between 0 and 1"),
        ("utility.1,2", "weights are four numbers"), ("set_F.-1", "beta is the weight of recall"),
        ("nDCG(dcg=exp-log2,gains={1:2})", "give them without dcg=exp-log2"),
        ("nDCG(gains={-1:2})", "a gain is given for a grade of at least 0"), ("ndcg.p=2", "ndcg takes grade=gain"),
        ("relstring.0", "relstring's length is at least 1"), ("unj@0", "a cutoff must be at least 1"),
        ("SetP(beta=2)", "SetP takes no parameter 'beta'"), ("gm_bpref.3", "takes no parameters"),
    ],
)  # fmt: skip
def test_bad_parameters_are_explained(name, message):
    with pytest.raises(RankhouseError, match=re.escape(message)):
        parse_measures([name])
