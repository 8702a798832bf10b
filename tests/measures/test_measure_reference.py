"""docs/measures.md is generated (rankhouse/catalog_docs/measure_reference.py) from the measure registry
and the models' headers, so that each definition is written once: the committed page must be what the
generator writes; the measure model it names for each family must be the one that computes it (checked
by building every measure model on trec_eval's sample data and reading which measures each table
holds); its links must lead to files of the checkout."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from clirunner import rankhouse_in_process
from conftest import TREC

from rankhouse.catalog_docs.measure_reference import families_by_model, reference
from rankhouse.evaluation import EvalOptions, evaluate
from rankhouse.measures import FAMILIES, parse_measure, parse_measures
from rankhouse.paths import MODELS_DIR, ROOT
from rankhouse.warehouse import Warehouse
from rankhouse.warehouse.catalog import load_models

PAGE = ROOT / "docs" / "measures.md"
ONE_PER_FAMILY = ["AP", "GMAP", "nDCG@10", "nDCG_exp@10", "P@5", "R@100", "RR", "Rprec", "Success@5", "Bpref",
                  "IPrec@0.5", "NumRet", "NumRel", "NumRelRet", "NumQ", "ERR@10", "Judged@10", "infAP", "gm_bpref",
                  "Rprec_mult@0.5", "utility", "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg", "relative_P@5", "SetP",
                  "SetR", "SetAP", "SetF", "num_nonrel_judged_ret", "RBP", "rbp_resid", "unj@5",
                  "relstring@10", "dcg", "ideal_dcg", "yaap"]  # fmt: skip
# The families of other labels, each built on trec_eval's sample of its format: (relevance file, run, measures)
OTHER_LABELS = {
    "prefs": ("prefs.test", "prefs.results.test", ["all_prefs"]),
    "qrels_jg": ("qrels.123", "results.test", ["map_avgjg", "P_avgjg.5", "Rprec_mult_avgjg.0.5"]),
}


def test_the_committed_page_is_what_the_registry_and_models_give():
    assert PAGE.read_text(encoding="utf-8") == reference(), "run: python scripts/measure_reference.py"
    done = subprocess.run([sys.executable, ROOT / "scripts" / "measure_reference.py", "--check"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0 and "up to date" in done.stdout, done.stdout + done.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every measure model built on the trec_eval sample, one measure of each family requested."""
    db = tmp_path_factory.mktemp("measures") / "w.duckdb"
    for args in (("load", "qrels", TREC / "qrels.test"), ("load", "run", TREC / "results.test"),
                 ("run", "-s", "+run_measures +measure_relstring", "-p",
                  f"measures={','.join(ONE_PER_FAMILY)}")):  # fmt: skip
        done = rankhouse_in_process(*args, "--db", db)
        assert done.returncode == 0, done.stderr
    return db


def test_each_family_is_computed_by_the_model_the_page_names(built):
    from warehouse_files import plain

    others = {m.family: fmt for fmt, (_, _, names) in OTHER_LABELS.items() for m in parse_measures(names)
              if m.family not in ("runid", "NumQ")}  # fmt: skip
    assert sorted([*(parse_measure(m)[0].family for m in ONE_PER_FAMILY), *others]) == sorted(FAMILIES)
    models = load_models(MODELS_DIR)
    named = families_by_model(models)
    computed: dict[str, list[str]] = {}
    requests = ("measure_requests", "measure_parameters")
    qrels_models = {f.model for f in FAMILIES.values() if f.judgments == "qrels"}
    with plain(built, labels=True, read_only=True) as con:  # evaluate models: beside the labels
        for name in sorted(n for n in models if n in qrels_models and n not in requests):
            labels = [row[0] for row in con.execute(f"SELECT DISTINCT measure FROM models.{name}").fetchall()]
            families = sorted({parse_measure(label)[0].family for label in labels})
            if families:
                computed[name] = families
    for fmt, (qrels, run, names) in OTHER_LABELS.items():
        with Warehouse(":memory:") as wh:
            evaluate(wh, TREC / qrels, [TREC / run], names, EvalOptions(rel_format=fmt))
            for name in sorted({FAMILIES[m.family].model for m in parse_measures(names) if m.family in others}):
                labels = [row[0] for row in wh.sql(f"SELECT DISTINCT measure FROM models.{name} WHERE study = 'eval'")]
                computed[name] = sorted({parse_measure(label)[0].family for label in labels})
    assert {m: sorted(f) for m, f in named.items()} == computed
    page = PAGE.read_text(encoding="utf-8")
    for model, families in named.items():  # each family's row of the table links its model
        for family in families:
            assert re.search(rf"^\| `{family}` \|.*\[`{model}`\]", page, re.MULTILINE), family


def test_every_link_of_the_page_leads_to_a_file():
    links = re.findall(r"\]\(([^)]+)\)", PAGE.read_text(encoding="utf-8"))
    assert len(links) > 30
    assert all((PAGE.parent / link).resolve().is_file() for link in links), links
