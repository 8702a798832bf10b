"""Measure names: ir_measures names (`nDCG@10`) and trec_eval names (`ndcg_cut.10`) to canonical ones.

The SQL models know measures by canonical name, `Family` or `Family@cutoff`; this module only
translates what a user types, and formats values the way trec_eval prints them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rankhouse.errors import RankhouseError

# family -> whether it takes a cutoff: "required", "optional" or "none"
FAMILIES = {
    "AP": "optional", "GMAP": "none", "nDCG": "optional", "nDCG_exp": "optional", "P": "required",
    "R": "required", "RR": "optional", "Rprec": "none", "Success": "required", "Bpref": "none",
    "NumRet": "none", "NumRel": "none", "NumRelRet": "none", "NumQ": "none", "IPrec": "required",
}  # fmt: skip
COUNTS = {"NumRet", "NumRel", "NumRelRet", "NumQ"}
SUMMARY_ONLY = {"GMAP", "NumQ", "runid"}  # printed in the `all` rows only, as trec_eval does
RUNID = "runid"

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
IR_MEASURE = re.compile(r"^(?P<family>[A-Za-z_]+)(?:@(?P<cutoff>\d+(?:\.\d+)?|\.\d+))?$")
TREC_MEASURE = re.compile(r"^(?P<family>[A-Za-z_]+)(?:\.(?P<params>.+))?$")


@dataclass(frozen=True)
class Measure:
    """A requested measure: `label` as printed, `canonical` as the SQL models know it."""

    label: str
    canonical: str

    @property
    def family(self) -> str:
        return self.canonical.split("@", 1)[0]


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


def _from_trec(name: str, params: str | None) -> list[Measure]:
    family, defaults = TREC_NAMES[name]
    if params is not None and defaults is None:
        raise RankhouseError(f"measure {name} takes no parameters")
    params = params or defaults
    cutoffs = [_number(p) for p in params.split(",") if p] if params else [None]
    measures = []
    for cutoff in cutoffs:
        canonical = family if cutoff is None else f"{family}@{cutoff}"
        measures.append(Measure(_trec_label(name, family, cutoff), canonical))
    return measures


def parse_measure(text: str) -> list[Measure]:
    """One measure name (ir_measures or trec_eval) -> the measures it stands for.

    >>> [m.canonical for m in parse_measure("P.5,10")]
    ['P@5', 'P@10']
    >>> parse_measure("nDCG@10")
    [Measure(label='nDCG@10', canonical='nDCG@10')]
    """
    text = text.strip()
    if text == RUNID:
        return [Measure(RUNID, RUNID)]
    if text == "official":
        return [m for name in TREC_OFFICIAL for m in parse_measure(name)]
    ir = IR_MEASURE.match(text)
    trec = TREC_MEASURE.match(text)
    if ir and ir.group("family") in FAMILIES:
        family, cutoff = ir.group("family"), ir.group("cutoff")
        needs = FAMILIES[family]
        if needs == "none" and cutoff is not None:
            raise RankhouseError(f"measure {family} takes no cutoff")
        if needs != "required" or cutoff is not None:
            canonical = family if cutoff is None else f"{family}@{_number(cutoff)}"
            return [Measure(text, canonical)]
        if text not in TREC_NAMES:  # `P` alone is trec_eval's P at its default depths
            raise RankhouseError(f"measure {text} needs a cutoff, e.g. {family}@10")
    if trec and trec.group("family") in TREC_NAMES:
        return _from_trec(trec.group("family"), trec.group("params"))
    known = ", ".join(sorted(FAMILIES)) + "; trec_eval: " + ", ".join(sorted(TREC_NAMES))
    raise RankhouseError(f"unknown measure {text!r}; known: {known}")


def parse_measures(specs: list[str] | None) -> list[Measure]:
    """Measure options (each may be a comma-separated list) -> unique measures, in order.

    A bare number continues the trec_eval measure before it: `P.5,10` is P_5 and P_10.
    Without options: trec_eval's default ("official") set.
    """
    items: list[str] = []
    for spec in specs or ["official"]:
        for part in (p.strip() for p in spec.split(",")):
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


def format_value(measure: Measure, value: float | str) -> str:
    """A value as trec_eval prints it: counts as integers, strings as they are, others to 4 decimals."""
    if isinstance(value, str):
        return value
    if measure.family in COUNTS:
        return str(int(round(value)))
    return f"{value:.4f}"
