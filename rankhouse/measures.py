"""The measure registry: one name per measure, its aliases, and how it is aggregated over queries.

Every ranked-list measure of every study is one of the families below, computed by one model each in
models/metrics/ (`measure_<family>.sql`). A measure is named `Family`, `Family@cutoff` or, with its own
relevance level, `Family(rel=2)@cutoff` (canonical, as the SQL models know it); users may type
ir_measures names (`nDCG@10`, `P(rel=2)@10`, `nDCG(dcg=exp-log2)@10`, which is nDCG_exp@10), trec_eval
names (`ndcg_cut.10`) or the aliases the seeds use (`Top-1` is P@1, `Hit@5` is Success@5, `MRR` is RR).
A protocol may also
give a measure its own label: `"nDCG_exp@5 as nDCG@5"` computes nDCG with exponential gain at 5 and
reports it as nDCG@5.

    >>> [(m.label, m.canonical) for m in parse_measures(["Top-1", "Hit@5", "nDCG_exp@5 as nDCG@5"])]
    [('Top-1', 'P@1'), ('Hit@5', 'Success@5'), ('nDCG@5', 'nDCG_exp@5')]
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass

from rankhouse.errors import RankhouseError, closest


@dataclass(frozen=True)
class Family:
    """A measure family: whether it takes a cutoff, how its per-query values aggregate, what it is, and
    the model of models/metrics/ that computes it."""

    name: str
    cutoff: str  # "required", "optional" or "none"
    aggregate: str  # "mean", "sum" or "geometric" (GMAP: exp of the mean log, each value floored at 1e-5)
    description: str
    model: str


FAMILIES = {
    family.name: family
    for family in (
        Family("AP", "optional", "mean", "average precision (trec_eval map; AP@k is map_cut.k)", "measure_ap"),
        Family("GMAP", "none", "geometric", "geometric mean of AP over queries (trec_eval gm_map)", "measure_ap"),
        Family(
            "nDCG", "optional", "mean", "nDCG with linear gain, the grade (trec_eval ndcg, ndcg_cut.k)", "measure_ndcg"
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
    )
}
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
COUNTS = {"NumRet", "NumRel", "NumRelRet", "NumQ"}
SUMMARY_ONLY = {"GMAP", "NumQ", "runid"}  # printed in the `all` rows only, as trec_eval does
RUNID = "runid"

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
}  # fmt: skip
TREC_OFFICIAL = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
]  # fmt: skip
DOUBLE_CUTOFFS = {"iprec_at_recall"}  # trec_eval reads these with atof, every other cutoff with atol
IR_MEASURE = re.compile(r"^(?P<family>[A-Za-z_]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>.+))?$")
TREC_MEASURE = re.compile(r"^(?P<family>[A-Za-z_]+)(?:\.(?P<params>.+))?$")
RECALL_LEVEL = re.compile(r"\d+(?:\.\d+)?|\.\d+")  # IPrec@r
LABELLED = re.compile(r"^(?P<measure>\S+)\s+as\s+(?P<label>\S+)$")


@dataclass(frozen=True)
class Measure:
    """A requested measure: `label` as printed, `canonical` as the SQL models know it."""

    label: str
    canonical: str

    @property
    def family(self) -> str:
        return re.match(r"[^(@]*", self.canonical).group()

    @property
    def rel(self) -> int | None:
        """The measure's own lowest relevant grade (P(rel=2)@10 -> 2); None: the evaluation's (-l)."""
        found = re.search(r"\(rel=(-?\d+)\)", self.canonical)
        return int(found.group(1)) if found else None

    @property
    def cutoff(self) -> float | None:
        """The cutoff as a number (P@5 -> 5.0), None without one."""
        return float(self.canonical.split("@", 1)[1]) if "@" in self.canonical else None

    @property
    def aggregate(self) -> str:
        """How per-query values combine into a run's value: mean, sum or geometric."""
        return FAMILIES[self.family].aggregate if self.family in FAMILIES else "mean"


def _number(text: str) -> str:
    """A cutoff as written in canonical names: `10`, `0.1`, `1.0` (a written point is kept)."""
    value = float(text)
    return str(int(value)) if value.is_integer() and "." not in text else repr(value)


def _trec_label(name: str, family: str, cutoff: str | None) -> str:
    if cutoff is None:
        return name
    if family == "IPrec":
        return f"{name}_{float(cutoff):.2f}"
    return f"{name}_{cutoff}"


def _ir_cutoff(text: str, cutoff: str) -> str:
    """An ir_measures cutoff (`P@10`): a whole number of documents, at least 1."""
    if not re.fullmatch(r"[+-]?\d+", cutoff):
        raise RankhouseError(f"measure {text!r}: a cutoff is a whole number of documents (e.g. P@10), not {cutoff!r}")
    if int(cutoff) < 1:
        raise RankhouseError(f"measure {text!r}: a cutoff must be at least 1, not {cutoff}")
    return str(int(cutoff))


def _ir_parameters(text: str, family: str, params: str) -> tuple[str, int | None]:
    """ir_measures' parameters (`P(rel=2)`, `nDCG(dcg=exp-log2)`) -> (family, rel): `dcg` picks the
    nDCG family, `rel` is a whole grade; anything else is refused."""
    given: dict[str, str] = {}
    for item in params.split(","):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not key or not equals or not value:
            raise RankhouseError(f"measure {text!r}: parameters are written key=value, e.g. P(rel=2)@10")
        if key in given:
            raise RankhouseError(f"measure {text!r}: parameter {key} is given twice")
        given[key] = value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value
    rel = None
    takes = "rel" if family in REL_FAMILIES else "dcg" if family == "nDCG" else None
    for key, value in given.items():
        if key != takes:
            also = f" (it takes {takes})" if takes else ""
            raise RankhouseError(f"measure {text!r}: {family} takes no parameter {key!r}{also}")
        if key == "rel":
            if not re.fullmatch(r"[+-]?\d+", value):
                raise RankhouseError(f"measure {text!r}: rel is a whole grade (e.g. rel=2), not {value!r}")
            rel = int(value)
        elif value not in DCG_FAMILIES:
            raise RankhouseError(f"measure {text!r}: dcg is {' or '.join(DCG_FAMILIES)}, not {value!r}")
        else:
            family = DCG_FAMILIES[value]
    return family, rel


def _trec_cutoffs(text: str, name: str, params: str) -> list[str]:
    """A trec_eval parameter list (`P.5,10`) as trec_eval reads it: each cutoff with atol (`2.6` is 2),
    or with atof for iprec_at_recall; sorted increasing; duplicates, and long cutoffs below 1, refused."""
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


def _from_trec(text: str, name: str, params: str | None) -> list[Measure]:
    family, defaults = TREC_NAMES[name]
    if params is not None and defaults is None:
        raise RankhouseError(f"measure {name} takes no parameters")
    cutoffs: list[str | None] = _trec_cutoffs(text, name, params or defaults) if (params or defaults) else [None]
    measures = []
    for cutoff in cutoffs:
        canonical = family if cutoff is None else f"{family}@{cutoff}"
        measures.append(Measure(_trec_label(name, family, cutoff), canonical))
    return measures


def _alias(text: str) -> str | None:
    """The canonical name an alias stands for (`Top-1` -> `P@1`, `Hit@5` -> `Success@5`), or None."""
    if text in ALIASES:
        return ALIASES[text]
    family, at, cutoff = text.partition("@")
    if family in FAMILY_ALIASES and at:
        return f"{FAMILY_ALIASES[family]}@{cutoff}"
    return None


def parse_measure(text: str) -> list[Measure]:
    """One measure name (ir_measures, trec_eval, an alias, or `<measure> as <label>`) -> the measures it
    stands for.

    >>> [m.canonical for m in parse_measure("P.5,10")]
    ['P@5', 'P@10']
    >>> parse_measure("nDCG@10")
    [Measure(label='nDCG@10', canonical='nDCG@10')]
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
    if text == "official":
        return [m for name in TREC_OFFICIAL for m in parse_measure(name)]
    alias = _alias(text)
    if alias is not None:
        return [Measure(text, m.canonical) for m in parse_measure(alias)]
    ir = IR_MEASURE.match(text)
    trec = TREC_MEASURE.match(text)
    if ir and ir.group("family") in FAMILIES:
        family, cutoff, params = ir.group("family"), ir.group("cutoff"), ir.group("params")
        family, rel = _ir_parameters(text, family, params) if params is not None else (family, None)
        needs = FAMILIES[family].cutoff
        if needs == "none" and cutoff is not None:
            raise RankhouseError(f"measure {family} takes no cutoff")
        if cutoff is not None and family == "IPrec":
            if not RECALL_LEVEL.fullmatch(cutoff):
                raise RankhouseError(f"measure {text!r}: IPrec@r takes a recall level r (e.g. IPrec@0.5)")
            cutoff = _number(cutoff)
        elif cutoff is not None:
            cutoff = _ir_cutoff(text, cutoff)
        if needs != "required" or cutoff is not None:
            canonical = family if rel is None else f"{family}(rel={rel})"
            return [Measure(text, canonical if cutoff is None else f"{canonical}@{cutoff}")]
        if text not in TREC_NAMES:  # `P` alone is trec_eval's P at its default depths
            raise RankhouseError(f"measure {text} needs a cutoff, e.g. {family}@10")
    if trec and trec.group("family") in TREC_NAMES:
        return _from_trec(text, trec.group("family"), trec.group("params"))
    known = ", ".join(sorted(FAMILIES)) + "; trec_eval: " + ", ".join(sorted(TREC_NAMES))
    known += "; aliases: " + ", ".join([*ALIASES, *(f"{a}@k" for a in FAMILY_ALIASES)])
    known += "; parameters: P(rel=2)@10 (also R, AP, RR, Success), nDCG(dcg=exp-log2)@10"
    raise RankhouseError(f"unknown measure {text!r}; {_did_you_mean(text) or 'known: ' + known}")


def parse_measures(specs: list[str] | None) -> list[Measure]:
    """Measure options (each may be a comma-separated list) -> unique measures, in order.

    A bare number continues the trec_eval measure before it: `P.5,10` is P_5 and P_10.
    Without options: trec_eval's default ("official") set.
    """
    items: list[str] = []
    for spec in specs or ["official"]:
        for part in (p.strip() for p in re.split(r",(?![^()]*\))", spec)):  # not a comma inside (...)
            if not part:
                continue
            if re.fullmatch(r"\d+(\.\d+)?|\.\d+", part) and items and "." in items[-1] and "@" not in items[-1]:
                items[-1] += "," + part
            else:
                items.append(part)
    measures: list[Measure] = []
    seen = set()
    for item in items:
        for measure in parse_measure(item):
            if measure.label not in seen:
                seen.add(measure.label)
                measures.append(measure)
    return measures


def measure_values(names: object) -> str:
    """The rows of models/metrics/measure_requests.sql for the requested measure names: `(position, label,
    canonical, family, cutoff, rel, aggregate)` SQL tuples (a jinja2 filter; the names are validated here).

    >>> print(measure_values(["Top-1", "AP(rel=2)"]))
    (1, 'Top-1', 'P@1', 'P', CAST(1.0 AS DOUBLE), CAST(NULL AS INTEGER), 'mean'),
            (2, 'AP(rel=2)', 'AP(rel=2)', 'AP', CAST(NULL AS DOUBLE), CAST(2 AS INTEGER), 'mean')
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
        rows.append(f"({position}, {', '.join(quoted)}, {cutoff}, {rel}, '{m.aggregate}')")
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
    return list(dict.fromkeys(f.model for f in FAMILIES.values() if f.name in families))


def format_value(measure: Measure, value: float | str) -> str:
    """A value as trec_eval prints it: counts as integers, strings as they are, others to 4 decimals."""
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
            names = {n: n for n in [*FAMILIES, *TREC_NAMES, *ALIASES]}
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
