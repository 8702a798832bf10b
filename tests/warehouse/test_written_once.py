"""Written once, enforced: a formula that sql/macros/ holds is never written again in a model. The seed
order of a ranking, a normal or other quantile, an interval's z constant, and the relevance test appear in
models only as macro calls (sql/macros/ranking.sql, distributions.sql, statistics.sql, relevance.sql)."""

from __future__ import annotations

import re

import pytest

from rankhouse.paths import MODELS_DIR

# what a model may not write itself -> the macro that holds it
FORBIDDEN = {
    "a seed order (score descending, then a tie key)": (re.compile(r"\b[\w.]*score\w*\s+DESC\s*,", re.I),
                                                        "seed_order / full_ranking (sql/macros/ranking.sql)"),
    "a z constant of a normal interval": (re.compile(r"(?<![\d.])(1\.9599\d*|1\.96|1\.6448\d*|2\.5758\d*)(?![\d])"),
                                          "two_sided_z, wilson_interval, cluster_ratio (sql/macros/statistics.sql)"),
    "a quantile function": (re.compile(r"\b(quantile_cont|quantile_disc|percentile_cont|percentile_disc|"
                                       r"approx_quantile|median|quantile)\s*\(", re.I),
                            "quantile, median, percentile_interval (sql/macros/)"),
    "Acklam's inverse normal": (re.compile(r"2\.50662827|0\.02425"), "normal_quantile (sql/macros/distributions.sql)"),
    "the relevance test": (re.compile(r"coalesce\(\s*\w+\.grade\s*>=\s*\w+\.rel\b", re.I),
                           "is_relevant (sql/macros/relevance.sql)"),
}  # fmt: skip


def code_of(sql: str) -> str:
    """A model's SQL without its comments (-- lines, {# #}) and without its jinja calls ({{ }}, {% %}):
    what the model writes itself."""
    sql = re.sub(r"\{#.*?#\}", " ", sql, flags=re.S)
    sql = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", sql, flags=re.S)
    return "\n".join(line.split("--", 1)[0] for line in sql.splitlines())


def violations(sql: str) -> list[str]:
    code = code_of(sql)
    return [f"{what}: {m.group(0)!r}; call {macro}" for what, (pattern, macro) in FORBIDDEN.items()
            for m in pattern.finditer(code)]  # fmt: skip


MODELS = sorted(MODELS_DIR.rglob("*.sql"))


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.relative_to(MODELS_DIR).as_posix())
def test_no_model_writes_a_formula_the_macros_hold(path):
    assert violations(path.read_text()) == []


@pytest.mark.parametrize(
    "written",
    [
        "row_number() OVER (PARTITION BY query_row ORDER BY score DESC, doc_row) AS rank",
        "row_number() OVER (ORDER BY p.score_key desc , p.chunk)",
        "greatest(0.0, ratio - 1.959964 * se)",
        "value + 1.96 * se",
        "quantile_cont(score, 0.9)",
        "median(x)",
        "CASE WHEN u < 0.02425 THEN 1 END",
        "count(*) FILTER (WHERE coalesce(j.grade >= m.rel, j.relevant))",
    ],
)
def test_the_lint_finds_each_formula_written_inline(written):
    assert len(violations(f"SELECT {written}\nFROM t")) == 1


def test_the_lint_reads_code_not_comments_or_macro_calls():
    sql = """-- ORDER BY score DESC, doc_row; z = 1.959964
{#- median(x) -#}
SELECT {{ quantile('x', 0.5) }}, row_number() OVER (ORDER BY {{ seed_order() }}), {{ is_relevant() }}
FROM t"""
    assert violations(sql) == []
