"""The measure registry: one name per measure, its aliases, its parameters, and how it is aggregated over
queries.

Every ranked-list measure of every study is one of the families below, computed by one model each in
models/metrics/ (`measure_<family>.sql`). A measure is named `Family`, `Family@cutoff` or, with
parameters, `Family(key=value,...)@cutoff` (canonical, as the SQL models know it: `P(rel=2)@10`,
`RBP(p=0.9)`, `nDCG(gains={1:3.0,2:9.0})`); users may type ir_measures names (`nDCG@10`, `P(rel=2)@10`,
`nDCG(dcg=exp-log2)@10`, which is nDCG_exp@10, `RBP(p=0.8)`, `SetF(beta=2)`, `infAP`), trec_eval names
with trec_eval's parameters (`ndcg_cut.10`, `P.5,10`, `rbp.p=0.8`, `set_F.2`, `ndcg.1=0,2=1`,
`utility.2,-1,0,0`, `11pt_avg.0.2,0.5,0.8`), trec_eval's groups (`official`, `all_trec`, `set`) or the
aliases the seeds use (`Top-1` is P@1, `Hit@5` is Success@5, `MRR` is RR). A protocol may also give a
measure its own label: `"nDCG_exp@5 as nDCG@5"` computes nDCG with exponential gain at 5 and reports it
as nDCG@5.

    >>> [(m.label, m.canonical) for m in parse_measures(["Top-1", "Hit@5", "nDCG_exp@5 as nDCG@5"])]
    [('Top-1', 'P@1'), ('Hit@5', 'Success@5'), ('nDCG@5', 'nDCG_exp@5')]
    >>> [(m.label, m.canonical) for m in parse_measures(["rbp.p=0.8", "set_F.2", "ndcg.1=3,2=9"])]
    [('rbp_p=0.8', 'RBP(p=0.8)'), ('set_F_2', 'SetF(beta=2.0)'), ('ndcg_1=3,2=9', 'nDCG(gains={1:3.0,2:9.0})')]
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass

from rankhouse.errors import RankhouseError, closest, did_you_mean


@dataclass(frozen=True)
class Family:
    """A measure family: whether it takes a cutoff, how its per-query values aggregate, what it is, the
    model of models/metrics/ that computes it, the ir_measures-style parameters it takes besides
    `rel` (REL_FAMILIES), and the labels it reads (JUDGMENT_KINDS: qrels, preferences, or qrels with
    judgment groups)."""

    name: str
    cutoff: str  # "required", "optional" or "none"
    aggregate: str  # "mean", "sum", "geometric" (exp of the mean log, each value floored at 1e-5) or "text"
    description: str
    model: str
    params: tuple[str, ...] = ()
    judgments: str = "qrels"  # the labels it reads: "qrels", "prefs" (preferences) or "qrels_jg" (judgment groups)


# The preference measures (trec_eval -R prefs, -R qrels_prefs; models/metrics/measure_prefs.sql): of a
# preference A > B, the ranking fulfils it when it ranks A above B (a retrieved document being above every
# unretrieved one); "retrieved" preferences have A and B both retrieved, "implied" ones exactly one.
PREFERENCE_FAMILIES = (
    ("prefs_num_prefs_poss", "sum", "preferences of the topic's judgment groups, retrieved or not "
     "(trec_eval prefs_num_prefs_poss)"),
    ("prefs_num_prefs_ful", "sum", "preferences fulfilled, the implied ones included (trec_eval prefs_num_prefs_ful)"),
    ("prefs_num_prefs_ful_ret", "sum", "preferences fulfilled among the retrieved documents "
     "(trec_eval prefs_num_prefs_ful_ret)"),
    ("prefs_simp", "mean", "preferences fulfilled over all preferences (trec_eval prefs_simp)"),
    ("prefs_pair", "mean", "per document pair, the share of the groups' preferences the ranking fulfils, averaged "
     "over pairs (trec_eval prefs_pair)"),
    ("prefs_avgjg", "mean", "per judgment group, preferences fulfilled over its preferences, averaged over groups "
     "(trec_eval prefs_avgjg)"),
    ("prefs_avgjg_Rnonrel", "mean", "prefs_avgjg with as many non-relevant documents as relevant ones in each group "
     "(trec_eval prefs_avgjg_Rnonrel)"),
    ("prefs_simp_ret", "mean", "prefs_simp over the retrieved preferences (trec_eval prefs_simp_ret)"),
    ("prefs_pair_ret", "mean", "prefs_pair over the pairs both retrieved (trec_eval prefs_pair_ret)"),
    ("prefs_avgjg_ret", "mean", "prefs_avgjg over the retrieved preferences (trec_eval prefs_avgjg_ret)"),
    ("prefs_avgjg_Rnonrel_ret", "mean", "prefs_avgjg_Rnonrel over the retrieved documents "
     "(trec_eval prefs_avgjg_Rnonrel_ret)"),
    ("prefs_simp_imp", "mean", "prefs_simp over the retrieved and implied preferences (trec_eval prefs_simp_imp)"),
    ("prefs_pair_imp", "mean", "prefs_pair over the pairs with a retrieved document (trec_eval prefs_pair_imp)"),
    ("prefs_avgjg_imp", "mean", "prefs_avgjg over the retrieved and implied preferences (trec_eval prefs_avgjg_imp)"),
)  # fmt: skip


FAMILIES = {
    family.name: family
    for family in (
        Family("AP", "optional", "mean", "average precision (trec_eval map; AP@k is map_cut.k)", "measure_ap"),
        Family("GMAP", "none", "geometric", "geometric mean of AP over queries (trec_eval gm_map)", "measure_ap"),
        Family(
            "nDCG", "optional", "mean", "nDCG with linear gain, the grade, or the gains given (trec_eval ndcg, "
            "ndcg_cut.k; ndcg.1=0,2=1 is nDCG(gains={1:0.0,2:1.0}))", "measure_ndcg", ("dcg", "gains"),
        ),
        Family("nDCG_exp", "optional", "mean", "nDCG with exponential gain 2^grade - 1", "measure_ndcg"),
        Family("P", "required", "mean", "precision at k: relevant in the first k, divided by k", "measure_precision"),
        Family("R", "required", "mean", "recall at k: relevant in the first k over all relevant", "measure_recall"),
        Family(
            "RR", "optional", "mean", "reciprocal rank of the first relevant document (RR@k: within k)", "measure_rr"
        ),
        Family("Rprec", "none", "mean", "precision at rank R, R the number of relevant documents", "measure_rprec"),
        Family("Success", "required", "mean", "1 if a relevant document is in the first k, else 0", "measure_success"),
        Family("Bpref", "none", "mean", "binary preference (Buckley and Voorhees 2004)", "measure_bpref"),
        Family(
            "IPrec", "required", "mean", "interpolated precision at a recall level (iprec_at_recall)", "measure_iprec"
        ),
        Family("NumRet", "none", "sum", "documents retrieved", "measure_counts"),
        Family("NumRel", "none", "sum", "relevant documents in the judgments", "measure_counts"),
        Family("NumRelRet", "none", "sum", "relevant documents retrieved", "measure_counts"),
        Family("NumQ", "none", "sum", "queries evaluated (1 per query, summed)", "measure_queries"),
        Family(
            "ERR", "optional", "mean", "expected reciprocal rank, graded (Chapelle et al. 2009; ERR@k)", "measure_err"
        ),
        Family(
            "Judged", "optional", "mean", "share of the first k retrieved documents that are judged", "measure_judged"
        ),
        Family("infAP", "none", "mean", "inferred AP over a judged sample of the pool (trec_eval infAP)",
               "measure_infap"),
        Family("gm_bpref", "none", "geometric", "geometric mean of Bpref over queries (trec_eval gm_bpref)",
               "measure_bpref"),
        Family("Rprec_mult", "required", "mean", "precision at m x R documents (trec_eval Rprec_mult)",
               "measure_rprec"),
        Family("utility", "none", "mean", "set utility from the retrieved/relevant contingency table, weights "
               "(1, -1, 0, 0) by default (trec_eval utility)", "measure_set", ("weights",)),
        Family("11pt_avg", "none", "mean", "interpolated precision averaged over recall levels, 0.0 to 1.0 by 0.1 by "
               "default (trec_eval 11pt_avg)", "measure_iprec", ("levels",)),
        Family("binG", "none", "mean", "binary G: 1 / log2(2 + non-relevant above) averaged over the relevant "
               "documents (trec_eval binG)", "measure_bing"),
        Family("G", "none", "mean", "normalized gain G, graded (trec_eval G)", "measure_g", ("gains",)),
        Family("ndcg_rel", "none", "mean", "nDCG averaged over the relevant documents (trec_eval ndcg_rel)",
               "measure_ndcg_rel", ("gains",)),
        Family("Rndcg", "none", "mean", "nDCG averaged at the R levels of the ideal ranking (trec_eval Rndcg)",
               "measure_rndcg", ("gains",)),
        Family("relative_P", "required", "mean", "relevant in the first k over min(k, R) (trec_eval relative_P)",
               "measure_relative_p"),
        Family("SetP", "none", "mean", "relevant retrieved over retrieved (trec_eval set_P); SetP(relative=True): "
               "over min(retrieved, R) (set_relative_P)", "measure_set", ("relative",)),
        Family("SetR", "none", "mean", "relevant retrieved over relevant (trec_eval set_recall)", "measure_set"),
        Family("SetAP", "none", "mean", "set precision times set recall (trec_eval set_map)", "measure_set"),
        Family("SetF", "none", "mean", "set F: (beta + 1) P R / (beta P + R), beta 1 by default (trec_eval set_F)",
               "measure_set", ("beta",)),
        Family("num_nonrel_judged_ret", "none", "sum", "judged non-relevant documents retrieved "
               "(trec_eval num_nonrel_judged_ret)", "measure_counts"),
        Family("RBP", "none", "mean", "rank-biased precision (Moffat and Zobel 2008), gains normalized to [0, 1] "
               "(trec_eval rbp: p 0.9 by default; ir_measures RBP: p 0.8)", "measure_rbp", ("p",)),
        Family("rbp_resid", "none", "mean", "the residual of RBP: what unjudged documents could add "
               "(trec_eval rbp_resid)", "measure_rbp", ("p",)),
        Family("unj", "required", "mean", "share of the first k ranks holding an unjudged document, over k "
               "(trec_eval unj)", "measure_judged"),
        Family("relstring", "optional", "text", "the grades of the first k documents (10 by default) as characters, "
               "per query only (trec_eval relstring)", "measure_relstring"),
        Family("dcg", "none", "mean", "DCG: gain / log2(rank + 1) summed over the ranking, with nDCG's gains "
               "(trec_eval dcg)", "measure_dcg", ("gains",)),
        Family("ideal_dcg", "none", "mean", "the DCG of the ideal ranking, nDCG's denominator (trec_eval ideal_dcg)",
               "measure_dcg", ("gains",)),
        Family("yaap", "none", "mean", "yet another AP (Robertson 2012): ln((1 + S) / (1 + R - S)), S the sum of "
               "the precisions at the relevant documents retrieved (trec_eval yaap)", "measure_yaap"),
        # trec_eval -R qrels_jg: a measure against each judgment group's qrels, averaged over a topic's groups
        Family("map_avgjg", "none", "mean", "AP against each judgment group's qrels, averaged over the topic's groups "
               "(trec_eval map_avgjg)", "measure_avgjg", judgments="qrels_jg"),
        Family("P_avgjg", "required", "mean", "P@k against each judgment group's qrels, averaged over the topic's "
               "groups (trec_eval P_avgjg)", "measure_avgjg", judgments="qrels_jg"),
        Family("Rprec_mult_avgjg", "required", "mean", "Rprec_mult@m against each judgment group's qrels, averaged "
               "over the topic's groups (trec_eval Rprec_mult_avgjg)", "measure_avgjg", judgments="qrels_jg"),
        # trec_eval -R prefs and -R qrels_prefs: preferences between documents, fulfilled or not by the ranking
        *(Family(name, "none", aggregate, description, "measure_prefs", judgments="prefs")
          for name, aggregate, description in PREFERENCE_FAMILIES),
    )
}  # fmt: skip
# Families that take ir_measures' `rel` (the lowest grade counted relevant, for this measure alone).
REL_FAMILIES = {"P", "R", "AP", "RR", "Success"}
# ir_measures' nDCG(dcg=...): the DCG formulation -> the family computing it
DCG_FAMILIES = {"log2": "nDCG", "exp-log2": "nDCG_exp"}
# The highest grade a family's formula takes, and why: qrels with a higher grade are refused before any
# model is built (evaluation.check_grades). ERR's is the scale's g_max, measure_err's err_max_grade.
GRADE_LIMITS: dict[str, tuple[str | int, str]] = {
    "ERR": ("err_max_grade", "the top g_max of ERR's grade scale, measure_err's err_max_grade, as gdeval's: "
                             "a stop probability (2^grade - 1) / 2^g_max is at most 1"),
    "nDCG_exp": (1023, "the highest grade whose gain 2^grade - 1 is a finite double"),
}  # fmt: skip
COUNTS = {
    "NumRet",
    "NumRel",
    "NumRelRet",
    "NumQ",
    "num_nonrel_judged_ret",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
}
SUMMARY_ONLY = {"GMAP", "gm_bpref", "NumQ", "runid"}  # printed in the `all` rows only, as trec_eval does
TEXT = {"relstring"}  # a string per query, printed in the per-query rows only (no `all` row)
RUNID = "runid"
# The default values of parameters that a canonical name leaves out (RBP's p is always written: ir_measures'
# default is 0.8, trec_eval's 0.9).
DEFAULTS: dict[str, dict[str, object]] = {
    "SetF": {"beta": 1.0},
    "SetP": {"relative": False},
    "utility": {"weights": (1.0, -1.0, 0.0, 0.0)},
    "11pt_avg": {"levels": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)},
}
PARAMETER_ORDER = ("rel", "p", "beta", "relative", "weights", "levels", "gains")
MAX_PARAMETERS = 64  # values one measure's parameters may hold (models/metrics/measure_parameters.sql)
DEFAULT_RELSTRING = 10

# Names the seeds use: exact names, and families whose cutoff carries over (`Hit@5` -> `Success@5`).
ALIASES = {"Top-1": "P@1", "MRR": "RR"}
FAMILY_ALIASES = {"Hit": "Success"}

# trec_eval name -> (family, default parameters when given without any)
DEPTHS = "5,10,15,20,30,100,200,500,1000"
TREC_NAMES: dict[str, tuple[str, str | None]] = {
    "map": ("AP", None), "gm_map": ("GMAP", None), "map_cut": ("AP", DEPTHS),
    "ndcg": ("nDCG", None), "ndcg_cut": ("nDCG", DEPTHS), "P": ("P", DEPTHS), "recall": ("R", DEPTHS),
    "success": ("Success", "1,5,10"), "recip_rank": ("RR", None), "Rprec": ("Rprec", None),
    "bpref": ("Bpref", None), "num_ret": ("NumRet", None), "num_rel": ("NumRel", None),
    "num_rel_ret": ("NumRelRet", None), "num_q": ("NumQ", None),
    "iprec_at_recall": ("IPrec", "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"),
    "infAP": ("infAP", None), "gm_bpref": ("gm_bpref", None),
    "Rprec_mult": ("Rprec_mult", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
    "utility": ("utility", None), "11pt_avg": ("11pt_avg", None), "binG": ("binG", None), "G": ("G", None),
    "ndcg_rel": ("ndcg_rel", None), "Rndcg": ("Rndcg", None), "relative_P": ("relative_P", DEPTHS),
    "set_P": ("SetP", None), "set_relative_P": ("SetP", None), "set_recall": ("SetR", None),
    "set_map": ("SetAP", None), "set_F": ("SetF", None), "num_nonrel_judged_ret": ("num_nonrel_judged_ret", None),
    "rbp": ("RBP", None), "rbp_resid": ("rbp_resid", None), "unj": ("unj", "5,10,20"),
    "relstring": ("relstring", None), "dcg": ("dcg", None), "ideal_dcg": ("ideal_dcg", None),
    "yaap": ("yaap", None), "map_avgjg": ("map_avgjg", None), "P_avgjg": ("P_avgjg", DEPTHS),
    "Rprec_mult_avgjg": ("Rprec_mult_avgjg", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
    **{name: (name, None) for name, _, _ in PREFERENCE_FAMILIES},
}  # fmt: skip
# How trec_eval reads a name's parameters (meas_init.c): "cutoffs" (whole numbers, sorted, one value each),
# "levels" (numbers, sorted, one value each), "values" (a list of numbers, one value: its label is the name
# and the parameters as written), "pairs" (`level=gain` and `p=...` pairs, one value, labelled the same way).
TREC_PARAMETERS = {
    "map_cut": "cutoffs", "ndcg_cut": "cutoffs", "P": "cutoffs", "recall": "cutoffs", "success": "cutoffs",
    "relative_P": "cutoffs", "unj": "cutoffs", "P_avgjg": "cutoffs", "iprec_at_recall": "levels",
    "Rprec_mult": "levels", "Rprec_mult_avgjg": "levels",
    "utility": "values", "11pt_avg": "values", "set_F": "values", "relstring": "values",
    "ndcg": "pairs", "G": "pairs", "ndcg_rel": "pairs", "Rndcg": "pairs", "rbp": "pairs", "rbp_resid": "pairs",
    "dcg": "pairs", "ideal_dcg": "pairs",
}  # fmt: skip
TREC_FIXED = {"set_relative_P": {"relative": True}, "rbp": {"p": 0.9}, "rbp_resid": {"p": 0.9}}
# trec_eval's groups (-m official, all_trec, set), in the order trec_eval prints their measures
TREC_OFFICIAL = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
]  # fmt: skip
TREC_ALL = [
    *TREC_OFFICIAL, "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G",
    "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
]  # fmt: skip
TREC_SET = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_relative_P", "set_recall",
            "set_map", "set_F"]  # fmt: skip
TREC_PREFS = ["runid", "num_q", *(name for name, _, _ in PREFERENCE_FAMILIES)]
TREC_PREFS_OFFICIAL = ["runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                       "prefs_simp", "prefs_pair", "prefs_avgjg"]  # fmt: skip
TREC_QRELS_JG = ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"]
TREC_GROUPS = {"official": TREC_OFFICIAL, "all_trec": TREC_ALL, "set": TREC_SET, "all_prefs": TREC_PREFS,
               "prefs": TREC_PREFS_OFFICIAL, "qrels_jg": TREC_QRELS_JG}  # fmt: skip
# The labels each kind of family reads, as trec_eval's -R names them (the formats that give them)
JUDGMENT_KINDS = {"qrels": ("qrels",), "prefs": ("prefs", "qrels_prefs"), "qrels_jg": ("qrels_jg",)}
REL_FORMATS = {fmt: kind for kind, formats in JUDGMENT_KINDS.items() for fmt in formats}
ANY_JUDGMENTS = {"NumQ", RUNID}  # measured whatever the labels are (num_q, runid)
DOUBLE_CUTOFFS = {
    "iprec_at_recall",
    "Rprec_mult",
    "Rprec_mult_avgjg",
}  # trec_eval reads these with atof, every other cutoff with atol
# ir_measures-style cutoffs that are numbers, not whole ranks
LEVEL_FAMILIES = {"IPrec", "Rprec_mult", "Rprec_mult_avgjg"}
IR_MEASURE = re.compile(r"^(?P<family>\w+?)(?:\((?P<params>.*)\))?(?:@(?P<cutoff>[^()]+))?$")
TREC_MEASURE = re.compile(r"^(?P<family>\w+?)(?:\.(?P<params>.+))?$")
RECALL_LEVEL = re.compile(r"\d+(?:\.\d+)?|\.\d+")  # IPrec@r, Rprec_mult@m
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
LABELLED = re.compile(r"^(?P<measure>\S+)\s+as\s+(?P<label>\S+)$")


def _split(text: str) -> list[str]:
    """`text` split at the commas outside (), [] and {}.

    >>> _split("gains={1:3,2:9},p=0.8")
    ['gains={1:3,2:9}', 'p=0.8']
    """
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _num(value: float) -> str:
    """A parameter's number as canonical names write it: the double's shortest form (2.0, 0.25, -1.0)."""
    return repr(float(value))


def _format_parameter(key: str, value: object) -> str:
    if key == "gains":
        return "{" + ",".join(f"{grade}:{_num(gain)}" for grade, gain in sorted(value.items())) + "}"
    if key in ("weights", "levels"):
        return "[" + ",".join(_num(v) for v in value) + "]"
    if key == "relative":
        return str(bool(value))
    if key == "rel":
        return str(int(value))
    return _num(value)


def _canonical(family: str, params: dict, cutoff: str | None) -> str:
    """`Family(key=value,...)@cutoff`, the parameters in PARAMETER_ORDER, defaults (DEFAULTS) left out."""
    defaults = DEFAULTS.get(family, {})
    written = [
        f"{key}={_format_parameter(key, params[key])}"
        for key in PARAMETER_ORDER
        if key in params and params[key] is not None and not (key in defaults and _same(params[key], defaults[key]))
    ]
    name = f"{family}({','.join(written)})" if written else family
    return name if cutoff is None else f"{name}@{cutoff}"


def _same(a: object, b: object) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(float(x) == float(y) for x, y in zip(a, b))
    return a == b


def _number_value(text: str, what: str, key: str, value: str) -> float:
    if not NUMBER.fullmatch(value.strip()):
        raise RankhouseError(f"measure {text!r}: {key} is a number, not {value!r} ({what})")
    return float(value)


def _parameter_value(text: str, family: str, key: str, value: str) -> object:
    """One ir_measures-style parameter of `family` (`rel=2`, `p=0.8`, `gains={1:3,2:9}`, `weights=[2,-1,0,0]`,
    `levels=[0.2,0.5]`, `beta=2`, `relative=True`), read and checked."""
    value = value.strip()
    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    if key == "rel":
        if not re.fullmatch(r"[+-]?\d+", value):
            raise RankhouseError(f"measure {text!r}: rel is a whole grade (e.g. rel=2), not {value!r}")
        return int(value)
    if key == "p":
        p = _number_value(text, "a persistence between 0 and 1", key, value)
        if not 0 < p < 1:
            raise RankhouseError(f"measure {text!r}: p is a persistence between 0 and 1 (exclusive), not {value}")
        return p
    if key == "beta":
        beta = _number_value(text, "the weight of recall, at least 0", key, value)
        if beta < 0:
            raise RankhouseError(f"measure {text!r}: beta is the weight of recall, at least 0, not {value}")
        return beta
    if key == "relative":
        if value not in ("True", "False", "true", "false", "1", "0"):
            raise RankhouseError(f"measure {text!r}: relative is True or False, not {value!r}")
        return value in ("True", "true", "1")
    if key in ("weights", "levels"):
        if not (value.startswith("[") and value.endswith("]")):
            raise RankhouseError(f"measure {text!r}: {key} is a list of numbers in brackets, e.g. {key}=[0.2,0.5]")
        items = [v for v in _split(value[1:-1]) if v]
        numbers = tuple(_number_value(text, "a list of numbers", key, v) for v in items)
        if key == "weights" and len(numbers) != 4:
            raise RankhouseError(
                f"measure {text!r}: weights are four numbers (relevant retrieved, non-relevant "
                f"retrieved, relevant not retrieved, non-relevant not retrieved), not {len(numbers)}"
            )
        if not numbers or len(numbers) > MAX_PARAMETERS:
            raise RankhouseError(f"measure {text!r}: {key} holds 1 to {MAX_PARAMETERS} numbers, not {len(numbers)}")
        return numbers
    if key == "gains":
        if not (value.startswith("{") and value.endswith("}")):
            raise RankhouseError(f"measure {text!r}: gains are grade:gain pairs in braces, e.g. gains={{1:1,2:3}}")
        gains: dict[int, float] = {}
        for item in (v for v in _split(value[1:-1]) if v):
            grade, colon, gain = (part.strip() for part in item.partition(":"))
            gains.update(_gain(text, grade, gain) if colon else _gain(text, item, ""))
        if not gains or len(gains) > MAX_PARAMETERS:
            raise RankhouseError(f"measure {text!r}: gains hold 1 to {MAX_PARAMETERS} grades, not {len(gains)}")
        return gains
    raise RankhouseError(f"measure {text!r}: {family} takes no parameter {key!r}")


def _gain(text: str, grade: str, gain: str) -> dict[int, float]:
    """One `grade:gain` (or trec_eval's `grade=gain`) pair: a grade of at least 0 and a number."""
    if not re.fullmatch(r"\d+", grade):
        raise RankhouseError(f"measure {text!r}: a gain is given for a grade of at least 0 (e.g. 1:3), not {grade!r}")
    return {int(grade): _number_value(text, "the gain of a grade", f"the gain of grade {grade}", gain)}


def _ir_parameters(text: str, family: str, params: str) -> tuple[str, dict]:
    """ir_measures' parameters (`P(rel=2)`, `nDCG(dcg=exp-log2)`, `RBP(p=0.8)`, `nDCG(gains={1:3,2:9})`) ->
    (family, parameters): `dcg` picks the nDCG family; anything a family does not take is refused."""
    takes = (("rel",) if family in REL_FAMILIES else ()) + FAMILIES[family].params
    given: dict[str, object] = {}
    for item in _split(params):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not key or not equals or not value:
            raise RankhouseError(f"measure {text!r}: parameters are written key=value, e.g. P(rel=2)@10")
        if key in given:
            raise RankhouseError(f"measure {text!r}: parameter {key} is given twice")
        if key not in takes:
            also = f" (it takes {', '.join(takes)})" if takes else ""
            raise RankhouseError(f"measure {text!r}: {family} takes no parameter {key!r}{also}")
        if key == "dcg":
            value = value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value
            if value not in DCG_FAMILIES:
                raise RankhouseError(f"measure {text!r}: dcg is {' or '.join(DCG_FAMILIES)}, not {value!r}")
            given[key] = value
        else:
            given[key] = _parameter_value(text, family, key, value)
    if "dcg" in given:
        family = DCG_FAMILIES[str(given.pop("dcg"))]
        if family == "nDCG_exp" and "gains" in given:
            raise RankhouseError(f"measure {text!r}: gains are linear gains: give them without dcg=exp-log2")
    if family == "RBP":
        given.setdefault("p", 0.8)  # ir_measures' default
    if family == "rbp_resid":
        given.setdefault("p", 0.9)  # trec_eval's
    return family, given


def _trec_cutoffs(text: str, name: str, params: str) -> list[str]:
    """A trec_eval parameter list (`P.5,10`) as trec_eval reads it: each cutoff with atol (`2.6` is 2),
    or with atof for iprec_at_recall and Rprec_mult; sorted increasing; duplicates, and long cutoffs below 1,
    refused."""
    values: list[float] = []
    for part in (p.strip() for p in params.split(",") if p.strip()):
        if not re.fullmatch(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)", part):
            raise RankhouseError(f"measure {text!r}: cutoff {part!r} is not a number")
        if name in DOUBLE_CUTOFFS:
            values.append(float(part))
        else:
            value = int(float(part)) if "." in part else int(part)  # atol: the digits before the point
            if value < 1:
                read = f" (trec_eval reads {part!r} as {value})" if "." in part else ""
                raise RankhouseError(f"measure {text!r}: a cutoff must be at least 1, not {part}{read}")
            values.append(value)
    if len(set(values)) < len(values):
        raise RankhouseError(f"measure {text!r}: duplicate cutoffs (trec_eval reads a cutoff's whole part only)")
    if name in DOUBLE_CUTOFFS:
        written = dict(zip(values, (p.strip() for p in params.split(",") if p.strip())))
        return [_number(written[v]) for v in sorted(values)]
    return [str(int(v)) for v in sorted(values)]


def _trec_values(text: str, name: str, params: str) -> dict:
    """trec_eval's list parameters of one measure (`utility.2,-1,0,0`, `11pt_avg.0.2,0.5`, `set_F.2`,
    `relstring.20`), read with atof as trec_eval reads them, in the order given."""
    parts = [p.strip() for p in params.split(",")]
    if not all(NUMBER.fullmatch(p) for p in parts):
        raise RankhouseError(f"measure {text!r}: {name} takes numbers separated by commas")
    numbers = tuple(float(p) for p in parts)
    if name == "utility":
        return {"weights": _parameter_value(text, "utility", "weights", "[" + ",".join(parts) + "]")}
    if name == "11pt_avg":
        return {"levels": _parameter_value(text, "11pt_avg", "levels", "[" + ",".join(parts) + "]")}
    if len(numbers) != 1:
        raise RankhouseError(f"measure {text!r}: {name} takes one number, not {len(numbers)}")
    if name == "set_F":
        return {"beta": _parameter_value(text, "SetF", "beta", parts[0])}
    if int(numbers[0]) < 1:  # relstring: trec_eval prints the first (long) n grades
        raise RankhouseError(f"measure {text!r}: relstring's length is at least 1, not {parts[0]}")
    return {"cutoff": str(int(numbers[0]))}


def _trec_pairs(text: str, name: str, params: str) -> dict:
    """trec_eval's `name=value` pairs (`ndcg.1=3,2=9`, `rbp.p=0.8`): a whole grade names its gain (nDCG, G,
    ndcg_rel, Rndcg), p RBP's persistence (rbp, rbp_resid)."""
    found: dict = {}
    for item in params.split(","):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not key or not value:
            raise RankhouseError(f"measure {text!r}: {name} takes key=value pairs, e.g. {name}.1=0,2=1")
        rbp = name in ("rbp", "rbp_resid")
        if key == "p" and rbp:
            found["p"] = _parameter_value(text, name, "p", value)
        elif not rbp and re.fullmatch(r"\d+", key):
            found.setdefault("gains", {}).update(_gain(text, key, value))
        else:  # trec_eval's rbp also reads gains (as it normalizes them); rankhouse's RBP takes the grades
            takes = "p=..., the persistence (its gains are the grades)" if rbp else "grade=gain pairs"
            raise RankhouseError(f"measure {text!r}: {name} takes {takes}, not {key!r}")
    return found


def _trec_label(name: str, family: str, cutoff: str | None) -> str:
    if cutoff is None:
        return name
    if family in LEVEL_FAMILIES:
        return f"{name}_{float(cutoff):.2f}"
    return f"{name}_{cutoff}"


def _from_trec(text: str, name: str, params: str | None) -> list[Measure]:
    family, defaults = TREC_NAMES[name]
    kind = TREC_PARAMETERS.get(name)
    if params is not None and kind is None:
        raise RankhouseError(f"measure {name} takes no parameters")
    fixed = dict(TREC_FIXED.get(name, {}))
    if kind in ("values", "pairs"):
        found = (_trec_values if kind == "values" else _trec_pairs)(text, name, params) if params is not None else {}
        cutoff = found.pop("cutoff", str(DEFAULT_RELSTRING) if name == "relstring" else None)
        label = name if params is None else f"{name}_{params}"
        return [Measure(label, _canonical(family, {**fixed, **found}, cutoff))]
    cutoffs: list[str | None] = _trec_cutoffs(text, name, params or defaults) if (params or defaults) else [None]
    return [Measure(_trec_label(name, family, c), _canonical(family, fixed, c)) for c in cutoffs]


def _number(text: str) -> str:
    """A cutoff as written in canonical names: `10`, `0.1`, `1.0` (a written point is kept)."""
    value = float(text)
    return str(int(value)) if value.is_integer() and "." not in text else repr(value)


def _ir_cutoff(text: str, cutoff: str) -> str:
    """An ir_measures cutoff (`P@10`): a whole number of documents, at least 1."""
    if not re.fullmatch(r"[+-]?\d+", cutoff):
        raise RankhouseError(f"measure {text!r}: a cutoff is a whole number of documents (e.g. P@10), not {cutoff!r}")
    if int(cutoff) < 1:
        raise RankhouseError(f"measure {text!r}: a cutoff must be at least 1, not {cutoff}")
    return str(int(cutoff))


@dataclass(frozen=True)
class Measure:
    """A requested measure: `label` as printed, `canonical` as the SQL models know it."""

    label: str
    canonical: str

    @property
    def family(self) -> str:
        return re.match(r"[^(@]*", self.canonical).group()

    @property
    def params(self) -> dict:
        """The canonical name's parameters, read (`RBP(p=0.8)` -> {'p': 0.8}); defaults left out."""
        found = re.match(r"[^(@]*\((.*)\)(?:@[^()]*)?$", self.canonical)
        if not found:
            return {}
        pairs = (item.partition("=") for item in _split(found.group(1)))
        return {key: _parameter_value(self.canonical, self.family, key, value) for key, _, value in pairs}

    @property
    def rel(self) -> int | None:
        """The measure's own lowest relevant grade (P(rel=2)@10 -> 2); None: the evaluation's (-l)."""
        found = re.search(r"\(rel=(-?\d+)[,)]", self.canonical)
        return int(found.group(1)) if found else None

    @property
    def cutoff(self) -> float | None:
        """The cutoff as a number (P@5 -> 5.0), None without one."""
        found = re.search(r"@([^()]+)$", self.canonical)
        return float(found.group(1)) if found else None

    @property
    def aggregate(self) -> str:
        """How per-query values combine into a run's value: mean, sum, geometric, or text (none)."""
        return FAMILIES[self.family].aggregate if self.family in FAMILIES else "mean"

    @property
    def parameters(self) -> str | None:
        """The parameters the SQL models read (models/metrics/measure_parameters.sql): `name=value` items,
        defaults included (`RBP(p=0.8)` -> 'p=0.8', `SetF` -> 'beta=1.0', `nDCG(gains={1:3.0})` -> '1=3.0',
        utility's weights a, b, c, d, 11pt_avg's levels each `level=`); None for a measure without any."""
        given = {**DEFAULTS.get(self.family, {}), **self.params}
        given.pop("rel", None)
        items = []
        for key in PARAMETER_ORDER:
            if key not in given:
                continue
            value = given[key]
            if key == "gains":
                items += [f"{grade}={_num(gain)}" for grade, gain in sorted(value.items())]
            elif key == "weights":
                items += [f"{name}={_num(v)}" for name, v in zip("abcd", value)]
            elif key == "levels":
                items += [f"level={_num(v)}" for v in value]
            else:
                items.append(f"{key}={_num(float(value))}")
        return ",".join(items) or None


def _alias(text: str) -> str | None:
    """The canonical name an alias stands for (`Top-1` -> `P@1`, `Hit@5` -> `Success@5`), or None."""
    if text in ALIASES:
        return ALIASES[text]
    family, at, cutoff = text.partition("@")
    if family in FAMILY_ALIASES and at:
        return f"{FAMILY_ALIASES[family]}@{cutoff}"
    return None


def parse_measure(text: str, given: dict[str, str] | None = None) -> list[Measure]:
    """One measure name (ir_measures, trec_eval, an alias, a trec_eval group, or `<measure> as <label>`) ->
    the measures it stands for. A group's measure that `given` names (trec_eval name -> that name with
    its parameters, as `-m relstring.20` beside `-m all_trec`) is read with those parameters, as trec_eval
    reads `-m all_trec -m relstring.20`.

    >>> [m.canonical for m in parse_measure("P.5,10")]
    ['P@5', 'P@10']
    >>> parse_measure("nDCG@10")
    [Measure(label='nDCG@10', canonical='nDCG@10')]
    >>> [(m.label, m.canonical) for m in parse_measure("Rprec_mult.0.2,1.5")]
    [('Rprec_mult_0.20', 'Rprec_mult@0.2'), ('Rprec_mult_1.50', 'Rprec_mult@1.5')]
    """
    text = text.strip()
    labelled = LABELLED.match(text)
    if labelled:
        found = parse_measure(labelled.group("measure"))
        if len(found) != 1:
            raise RankhouseError(f"measure {text!r}: only a single measure can be given a label")
        return [Measure(labelled.group("label"), found[0].canonical)]
    if text == RUNID:
        return [Measure(RUNID, RUNID)]
    if text in TREC_GROUPS:
        return [m for name in TREC_GROUPS[text] for m in parse_measure((given or {}).get(name, name))]
    alias = _alias(text)
    if alias is not None:
        return [Measure(text, m.canonical) for m in parse_measure(alias)]
    ir = IR_MEASURE.match(text)
    trec = TREC_MEASURE.match(text)
    if ir and ir.group("family") in FAMILIES:
        family, cutoff, params = ir.group("family"), ir.group("cutoff"), ir.group("params")
        family, given = _ir_parameters(text, family, params) if params is not None else (family, {})
        if family in ("RBP", "rbp_resid") and params is None:
            given = {"p": 0.8 if family == "RBP" else 0.9}
        needs = FAMILIES[family].cutoff
        if needs == "none" and cutoff is not None:
            raise RankhouseError(f"measure {family} takes no cutoff")
        if cutoff is not None and family in LEVEL_FAMILIES:
            if not RECALL_LEVEL.fullmatch(cutoff):
                which = "a recall level r (e.g. IPrec@0.5)" if family == "IPrec" else "a multiple m of R (e.g. @0.5)"
                raise RankhouseError(f"measure {text!r}: {family}@ takes {which}")
            cutoff = _number(cutoff)
        elif cutoff is not None:
            cutoff = _ir_cutoff(text, cutoff)
        if family == "relstring" and cutoff is None:
            cutoff = str(DEFAULT_RELSTRING)
        if needs != "required" or cutoff is not None:
            return [Measure(text, _canonical(family, given, cutoff))]
        if text not in TREC_NAMES:  # `P` alone is trec_eval's P at its default depths
            raise RankhouseError(f"measure {text} needs a cutoff, e.g. {family}@10")
    if trec and trec.group("family") in TREC_NAMES:
        return _from_trec(text, trec.group("family"), trec.group("params"))
    known = ", ".join(sorted(FAMILIES)) + "; trec_eval: " + ", ".join(sorted(TREC_NAMES))
    known += "; groups: " + ", ".join(TREC_GROUPS)
    known += "; aliases: " + ", ".join([*ALIASES, *(f"{a}@k" for a in FAMILY_ALIASES)])
    known += (
        "; parameters: P(rel=2)@10 (also R, AP, RR, Success), nDCG(dcg=exp-log2)@10, nDCG(gains={1:1,2:3}), "
        "RBP(p=0.8), SetF(beta=2)"
    )
    raise RankhouseError(f"unknown measure {text!r}; {_did_you_mean(text) or 'known: ' + known}")


# A part of a trec_eval parameter list that continues the measure before it (`P.5,10`, `utility.2,-1,0,0`,
# `ndcg.1=3,2=9`, `rbp.p=0.8,1=2`)
CONTINUATION = re.compile(r"(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)|\w+=[+-]?(?:\d+(?:\.\d*)?|\.\d+))")


def parse_measures(specs: list[str] | None) -> list[Measure]:
    """Measure options (each may be a comma-separated list) -> unique measures, in order.

    A bare number (or `name=number`) continues the trec_eval measure before it: `P.5,10` is P_5 and P_10.
    Without options: trec_eval's default ("official") set.
    """
    items: list[str] = []
    for spec in specs or ["official"]:
        for part in _split(spec):
            if not part:
                continue
            previous = items[-1] if items else ""
            trec = "." in previous and "@" not in previous and "(" not in previous
            if CONTINUATION.fullmatch(part) and trec:
                items[-1] += "," + part
            else:
                items.append(part)
    given: dict[str, str] = {}  # a trec_eval name given with parameters: a group's measure takes them
    for item in items:
        trec = TREC_MEASURE.match(item)
        if trec and trec.group("params") is not None and trec.group("family") in TREC_NAMES:
            given.setdefault(trec.group("family"), item)
    measures: list[Measure] = []
    seen = set()
    for item in items:
        for measure in parse_measure(item, given):
            if measure.label not in seen:
                seen.add(measure.label)
                measures.append(measure)
    return measures


def check_judgments(measures: list[Measure], rel_format: str) -> None:
    """Refuse a measure that reads other labels than a `rel_format` file gives (trec_eval -R: qrels,
    qrels_jg, prefs, qrels_prefs), naming the formats it needs; num_q and runid go with any.

    >>> check_judgments(parse_measures(["prefs_simp", "num_q"]), "qrels_prefs")
    >>> check_judgments(parse_measures(["map"]), "prefs")
    Traceback (most recent call last):
    ...
    rankhouse.errors.RankhouseError: measure map reads qrels (-R qrels): it cannot be computed from prefs judgments
    """
    if rel_format not in REL_FORMATS:
        known = ", ".join(REL_FORMATS)
        raise RankhouseError(
            f"-R/--rel-format is one of {known}, not {rel_format!r}{did_you_mean(rel_format, REL_FORMATS)}"
        )
    kind = REL_FORMATS[rel_format]
    for m in measures:
        needs = FAMILIES[m.family].judgments if m.family in FAMILIES else kind
        if m.family not in ANY_JUDGMENTS and needs != kind:
            formats = " or ".join(f"-R {fmt}" for fmt in JUDGMENT_KINDS[needs])
            what = {"qrels": "qrels", "prefs": "preference judgments", "qrels_jg": "qrels with judgment groups"}[needs]
            raise RankhouseError(
                f"measure {m.label} reads {what} ({formats}): it cannot be computed from {rel_format} judgments"
            )


def canonical_of_label(label: str) -> str | None:
    """The canonical name of the measure trec_eval prints as `label` (`P_5` -> `P@5`, `map` -> `AP`,
    `iprec_at_recall_0.10` -> `IPrec@0.1`, `utility_2,-1,0,0` -> its parameters), as a z-score file
    names measures (trec_eval -Z); None for a name that is no measure's label.

    >>> [canonical_of_label(x) for x in ("P_5", "map", "iprec_at_recall_0.10", "Rprec_mult_0.20", "nope_3")]
    ['P@5', 'AP', 'IPrec@0.1', 'Rprec_mult@0.2', None]
    """
    specs = [label] + [label[:i] + "." + label[i + 1 :] for i, c in enumerate(label) if c == "_"]
    for spec in specs:
        try:
            found = parse_measure(spec)
        except RankhouseError:
            continue
        for m in found:
            if m.label == label:
                return m.canonical
    return None


def measure_values(names: object) -> str:
    """The rows of models/metrics/measure_requests.sql for the requested measure names: `(position, label,
    canonical, family, cutoff, rel, aggregate, parameters)` SQL tuples (a jinja2 filter; the names are
    validated here).

    >>> print(measure_values(["Top-1", "AP(rel=2)"]))
    (1, 'Top-1', 'P@1', 'P', CAST(1.0 AS DOUBLE), CAST(NULL AS INTEGER), 'mean', CAST(NULL AS VARCHAR)),
            (2, 'AP(rel=2)', 'AP(rel=2)', 'AP', CAST(NULL AS DOUBLE), CAST(2 AS INTEGER), 'mean', CAST(NULL AS VARCHAR))
    """
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise RankhouseError(f"parameter measures must be a list of measure names, not {names!r}")
    measures = [m for m in parse_measures(list(names)) if m.canonical != RUNID]
    if not measures:
        raise RankhouseError(f"parameter measures names no measure: {names!r}")
    rows = []
    for position, m in enumerate(measures, start=1):
        cutoff = "CAST(NULL AS DOUBLE)" if m.cutoff is None else f"CAST({m.cutoff!r} AS DOUBLE)"
        rel = f"CAST({'NULL' if m.rel is None else m.rel} AS INTEGER)"
        quoted = [f"'{v}'" for v in (m.label.replace("'", "''"), m.canonical, m.family)]
        parameters = "CAST(NULL AS VARCHAR)" if m.parameters is None else f"'{m.parameters}'"
        rows.append(f"({position}, {', '.join(quoted)}, {cutoff}, {rel}, '{m.aggregate}', {parameters})")
    return ",\n        ".join(rows)


def measure_families(names: object) -> set[str]:
    """The canonical families of the requested measure names (a jinja2 filter, e.g. to skip counting
    retrieved documents when no NumRet is requested).

    >>> sorted(measure_families(["Top-1", "Hit@5"]))
    ['P', 'Success']
    """
    measure_values(names)  # validates
    return {m.family for m in parse_measures(list(names))}


def measure_models(names: object) -> list[str]:
    """The models of models/metrics/ that compute the requested measure names (a jinja2 filter:
    query_measures reads only these, so that a measure nobody asked for is not computed), in the order
    of FAMILIES.

    >>> measure_models(["AP", "nDCG@10", "GMAP", "P@5"])
    ['measure_ap', 'measure_ndcg', 'measure_precision']
    """
    families = measure_families(names)
    return list(dict.fromkeys(f.model for f in FAMILIES.values() if f.name in families and f.aggregate != "text"))


def text_models(measures: list[Measure]) -> list[str]:
    """The models of the requested measures whose per-query value is a string (relstring): not in
    query_measures, built and read on their own.

    >>> text_models(parse_measures(["relstring.20", "AP"]))
    ['measure_relstring']
    """
    families = {m.family for m in measures}
    return list(dict.fromkeys(f.model for f in FAMILIES.values() if f.name in families and f.aggregate == "text"))


def format_value(measure: Measure, value: float | str) -> str:
    """A value as trec_eval prints it: counts as integers, strings as they are, others to 4 decimals."""
    if measure.family in TEXT:
        return f"'{value}'"
    if isinstance(value, str):
        return value
    if measure.family in COUNTS:
        return str(int(round(value)))
    return f"{value:.4f}"


_SUGGESTING = contextvars.ContextVar("suggesting", default=False)


def closest_measure(text: str) -> str | None:
    """The measure name a mistyped one most likely meant, or None: the name in another case
    (`ndcg@10` -> `nDCG@10`), the closest spelling (`APP` -> `AP`), a trec_eval family in ir_measures
    syntax (`recall@100` -> `R@100`), a trec_eval output label (`P_10` -> `P.10`). Only a name that
    parses is offered.

    >>> closest_measure("ndcg@10"), closest_measure("NDCG_CUT.10"), closest_measure("P_10"), closest_measure("zzz")
    ('nDCG@10', 'ndcg_cut.10', 'P.10', None)
    """
    if _SUGGESTING.get():
        return None  # checking a suggestion: no suggestion of a suggestion
    label = re.fullmatch(r"([A-Za-z_]+?)_(\d+(?:\.\d+)?)", text)
    trec_label = closest(label.group(1), TREC_NAMES) if label else None
    if trec_label is not None:
        candidate = f"{trec_label}.{label.group(2)}"
    else:
        at = min((i for i in (text.find("@"), text.find(".")) if i >= 0), default=len(text))
        head, tail = text[:at], text[at:]
        if tail.startswith("@"):  # ir_measures syntax: families, or a trec_eval name standing for one
            names = {**{f: f for f in FAMILIES}, **{a: a for a in FAMILY_ALIASES}}
            names.update({t: f for t, (f, _) in TREC_NAMES.items() if t not in names})
        elif tail.startswith("."):  # trec_eval syntax
            names = {t: t for t in TREC_NAMES}
        else:
            names = {n: n for n in [*FAMILIES, *TREC_NAMES, *ALIASES, *TREC_GROUPS]}
        found = closest(head, names)
        if found is None:
            return None
        candidate = names[found] + tail
    token = _SUGGESTING.set(True)
    try:
        parse_measure(candidate)
    except RankhouseError:
        return None
    finally:
        _SUGGESTING.reset(token)
    return candidate if candidate != text else None


def _did_you_mean(text: str) -> str:
    """`did you mean 'nDCG@10'?` for a mistyped measure name (closest_measure), or nothing."""
    found = closest_measure(text)
    return f"did you mean {found!r}?" if found else ""
