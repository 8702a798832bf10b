"""Models cannot read files or run Python: every table function, file path and CTE scope is checked in
the parsed SQL, templates render in jinja2's sandbox, and parameters render as literals of their declared
type. Each test is an attack that must be refused with a message naming the model and the rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import TREC
from sqlglot import exp

import rankhouse.warehouse.render as render_module
from rankhouse.errors import ModelError
from rankhouse.paths import MODELS_DIR
from rankhouse.warehouse.catalog import parse_model
from rankhouse.warehouse.dag import Project, table_references
from rankhouse.warehouse.render import TemplateCache, parse, render

QRELS = TREC / "qrels.test"
GENERATORS = {"generate_series", "range", "unnest"}  # the table functions a model may call: they read nothing


def peek(root: Path, sql: str, *, parameters: str = "", raw: str = "", stage: str = "prepare") -> Path:
    """Write the attacking model models/staging/peek.sql under `root`."""
    lines = ["-- name: peek", "-- version: 1", f"-- stage: {stage}", "-- grain: run_id", "-- audits: at_least_one_row",
             "-- description: an attempt to read what a model may not."]  # fmt: skip
    lines += [f"-- parameters: {parameters}"] * bool(parameters) + [f"-- raw: {raw}"] * bool(raw)
    path = root / "staging" / "peek.sql"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n" + sql + "\n")
    return path


def model_refused(root: Path, message: str, params: dict | None = None) -> ModelError:
    """Loading the project under `root` fails on the model peek with `message`."""
    with pytest.raises(ModelError, match=message) as err:
        Project.load(root, params=params)
    assert err.value.model == "peek", err.value
    return err.value


def test_a_prepare_model_cannot_read_labels_through_lateral_read_csv(tmp_path):
    """The study's own models with one more prepare model: a file read after LATERAL is seen."""
    shutil.copytree(MODELS_DIR, tmp_path / "models")
    peek(tmp_path / "models", f"SELECT r.run_id FROM raw.runs AS r, LATERAL read_csv('{QRELS}') AS q")
    model_refused(tmp_path / "models", r"reads READ_CSV\('.*qrels.test'\) directly; models read only warehouse tables")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (f"SELECT r.run_id FROM raw.runs AS r, LATERAL read_blob('{QRELS}') AS f", "reads READ_BLOB"),
        (f"SELECT r.run_id FROM raw.runs AS r CROSS JOIN LATERAL read_text('{QRELS}') AS f", "reads READ_TEXT"),
        ("SELECT q.qid AS run_id FROM raw.runs AS r, LATERAL query_table('gate.qrels') AS q", "reads QUERY_TABLE"),
        (f"SELECT g.file AS run_id FROM raw.runs AS r, LATERAL glob('{TREC}/*') AS g", "reads GLOB"),
        ("SELECT q.qid AS run_id FROM raw.runs AS r, LATERAL query('SELECT * FROM gate.qrels') AS q", "reads QUERY"),
        (
            "WITH l AS (SELECT r.run_id FROM raw.runs AS r, LATERAL parquet_scan('x.parquet') AS p) "
            "SELECT run_id FROM l",
            "reads PARQUET_SCAN",
        ),
        (
            f"SELECT run_id FROM raw.runs UNION ALL SELECT r.run_id FROM raw.runs AS r, LATERAL sniff_csv('{QRELS}')",
            "reads SNIFF_CSV",
        ),
        (
            "SELECT run_id FROM raw.runs WHERE EXISTS (SELECT 1 FROM raw.runs, LATERAL duckdb_settings() AS s)",
            "reads DUCKDB_SETTINGS",
        ),
        ("SELECT getenv('HOME') AS run_id FROM raw.runs", "calls GETENV"),
        (f"SELECT read_text('{QRELS}') AS run_id FROM raw.runs", "calls READ_TEXT"),
    ],
)
def test_table_and_file_functions_are_refused_wherever_they_are(tmp_path, sql, message):
    peek(tmp_path, sql)
    err = model_refused(tmp_path, message)
    assert "models read only warehouse tables (load files with a loader)" in str(err)


def test_every_duckdb_table_function_but_the_pure_generators_is_refused(tmp_path):
    model = parse_model(peek(tmp_path, "SELECT 1 AS run_id"), tmp_path)
    con = duckdb.connect()
    query = "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type IN ('table', 'table_macro')"
    names = sorted(n for (n,) in con.execute(query).fetchall())
    con.close()
    assert len(names) > 50
    for name in names:
        sql = f"SELECT r.run_id FROM raw.runs AS r, LATERAL {name}('x', 1) AS f"
        if name in GENERATORS:
            assert table_references(model, parse(model, sql)) == {"raw.runs"}
            continue
        with pytest.raises(ModelError, match=f"reads {name.upper()}") as err:
            table_references(model, parse(model, sql))
        assert err.value.model == "peek"


@pytest.mark.parametrize(
    "sql",
    [
        # a CTE in one subquery does not hide the same bare name in another
        "SELECT run_id FROM (WITH qrels AS (SELECT run_id FROM raw.runs) SELECT run_id FROM qrels) "
        "UNION ALL SELECT run_id FROM qrels",
        "SELECT run_id FROM raw.runs WHERE run_id IN (SELECT run_id FROM qrels) "
        "AND EXISTS (WITH qrels AS (SELECT run_id FROM raw.runs) SELECT 1 FROM qrels)",
        # nor is a CTE visible before it is defined
        "WITH a AS (SELECT run_id FROM b), b AS (SELECT run_id FROM raw.runs) SELECT run_id FROM a",
    ],
)
def test_a_cte_is_visible_only_in_its_own_scope(tmp_path, sql):
    peek(tmp_path, sql)
    err = model_refused(tmp_path, "neither a CTE nor schema-qualified")
    assert "not visible here" in str(err)


def test_recursive_and_nested_ctes_still_resolve(tmp_path):
    peek(
        tmp_path,
        "WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 3), "
        "r AS (SELECT run_id FROM raw.runs, n) "
        "SELECT run_id FROM (WITH s AS (SELECT run_id FROM r) SELECT run_id FROM s) AS t",
    )
    assert Project.load(tmp_path).references["peek"] == {"raw.runs"}


@pytest.mark.parametrize(
    "sql",
    [
        # a CTE named like a file in one subquery hides the file read in another
        f'SELECT run_id FROM (WITH "{QRELS}" AS (SELECT run_id FROM raw.runs) SELECT run_id FROM "{QRELS}") '
        f'UNION ALL SELECT column0 AS run_id FROM "{QRELS}"',
        # a quoted path is refused even where a CTE of that name exists
        'WITH "/data/qrels.csv" AS (SELECT run_id FROM raw.runs) SELECT run_id FROM "/data/qrels.csv"',
        "WITH \"x.csv\" AS (SELECT run_id FROM raw.runs) SELECT run_id FROM 'x.csv'",
    ],
)
def test_a_quoted_file_path_is_never_a_table_name(tmp_path, sql):
    peek(tmp_path, sql)
    err = model_refused(tmp_path, r"is not a plain name \(letters, digits and _\)")
    assert "models read only warehouse tables (load files with a loader)" in str(err)


INJECTION = f"x' UNION ALL SELECT q.column0 FROM raw.runs, LATERAL read_csv('{QRELS}') AS q --"
BARE_INJECTION = f"'x' UNION ALL SELECT q.column0 FROM raw.runs, LATERAL read_csv('{QRELS}') AS q"
# between two quotes of the template's own, a quoted literal's text is SQL, whatever its quotes
QUOTELESS_INJECTION = " UNION ALL SELECT q.qid FROM raw.runs AS r, LATERAL query_table(r.run_id) AS q WHERE q.qid <> "


def where_literal(root: Path, params: dict) -> str:
    """The one string the model peek compares run_id with, rendered with `params`; no UNION."""
    model = Project.load(root, params=params).models["peek"]
    tree = parse(model, render(model, params))
    assert tree.find(exp.Union) is None, tree.sql("duckdb")
    return tree.args["where"].this.expression.name


def test_a_string_parameter_renders_as_one_literal(tmp_path):
    peek(tmp_path, "SELECT run_id FROM raw.runs WHERE run_id = {{ tag }}", parameters='tag = "x"')
    assert where_literal(tmp_path, {"tag": BARE_INJECTION}) == BARE_INJECTION
    assert where_literal(tmp_path, {"tag": "it's"}) == "it's"


def test_a_string_parameter_through_literal_stays_one_literal(tmp_path):
    """Safe before the sandbox too: a guard that `| literal` still quotes a marked parameter."""
    peek(tmp_path, "SELECT run_id FROM raw.runs WHERE run_id = {{ tag | literal }}", parameters='tag = "x"')
    assert where_literal(tmp_path, {"tag": INJECTION}) == INJECTION


@pytest.mark.parametrize(
    ("sql", "tag"),
    [
        ("SELECT run_id FROM raw.runs WHERE run_id = '{{ tag }}'", INJECTION),
        ("SELECT run_id FROM raw.runs WHERE run_id = '{{ tag | literal }}'", QUOTELESS_INJECTION),
        ('SELECT run_id FROM raw.runs WHERE run_id = "{{ tag }}"', INJECTION),
        ("SELECT run_id FROM raw.runs -- tagged {{ tag }}\nWHERE true", INJECTION.replace("x'", "x\n")[:-3]),
        ("SELECT run_id FROM raw.runs /* tagged {{ tag }} */ WHERE true", INJECTION.replace("x'", "x */")[:-3] + "/*"),
        # E'...' reads backslash escapes: a backslash before a quote would end the literal
        ("SELECT run_id FROM raw.runs WHERE run_id = E{{ tag }}", "x"),
        # the same literal once where SQL reads it and once in a comment
        (
            "{% set t %}{{ tag }}{% endset %}SELECT run_id FROM raw.runs WHERE run_id = {{ t }} -- {{ t }}",
            INJECTION.replace("x'", "x\n")[:-3],
        ),
    ],
)
def test_a_string_parameter_inside_quotes_or_a_comment_is_refused(tmp_path, sql, tag):
    peek(tmp_path, sql, parameters='tag = "x"')
    model_refused(tmp_path, "renders parameter tag inside a string, a quoted name or a comment", {"tag": tag})


@pytest.mark.parametrize(
    ("expression", "how"),
    [
        ("tag | upper", "upper"),
        ('"run_" ~ tag', "str"),
        ("tag | e", "str()"),
        ("tag | tojson", "filter tojson"),
        ("tag[0:6]", "an index or a slice"),
        ("', '.join(names)", "join"),
        ("names | join(', ')", "str"),
    ],
)
def test_a_string_parameter_cannot_become_unquoted_text(tmp_path, expression, how):
    peek(tmp_path, f"SELECT {{{{ {expression} }}}} FROM raw.runs", parameters='tag = "run_id", names = ["run_id"]')
    err = model_refused(tmp_path, r"a string of parameter (tag|names) renders only as a SQL literal")
    assert how in str(err)


def test_a_list_parameter_rendered_bare_is_refused(tmp_path):
    peek(tmp_path, "SELECT run_id FROM raw.runs WHERE run_id IN {{ names }}", parameters='names = ["a"]')
    model_refused(tmp_path, r"renders parameter names, a list, bare; write \{\{ names \| literal \}\}")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"depth": "10"}, r"parameter depth is declared a whole number \(default 0\), given '10'"),
        ({"depth": True}, r"parameter depth is declared a whole number \(default 0\), given True"),
        ({"depth": 2.5}, r"parameter depth is declared a whole number \(default 0\), given 2.5"),
        ({"names": [1, 2]}, r"parameter names is declared a list of strings \(default \['a'\]\), given \[1, 2\]"),
        ({"names": "a"}, r"parameter names is declared a list of strings \(default \['a'\]\), given 'a'"),
        ({"weight": float("nan")}, r"parameter weight is declared a finite number \(default 1.0\), given nan"),
        ({"weight": float("inf")}, r"parameter weight is declared a finite number \(default 1.0\), given inf"),
        ({"flag": 1}, r"parameter flag is declared true or false \(default False\), given 1"),
        ({"pairs": [["a", float("nan")]]}, r"parameter pairs is declared a list \(default \[\]\), given \[\['a', nan"),
    ],
)
def test_a_parameter_of_the_wrong_type_is_refused_before_anything_renders(tmp_path, given, message):
    peek(
        tmp_path,
        "SELECT run_id FROM raw.runs WHERE {{ depth }} >= 0 AND {{ weight }} > 0 AND run_id IN {{ names | literal }}"
        " AND {{ flag }} OR {{ pairs | length }} > 0",
        parameters='depth = 0, weight = 1.0, names = ["a"], flag = false, pairs = []',
    )
    assert Project.load(tmp_path, params={"weight": 2, "pairs": [["a", 1]]}).references["peek"] == {"raw.runs"}
    model_refused(tmp_path, message, given)


@pytest.mark.parametrize(
    "escape",
    [
        "lipsum.__globals__['os'].environ['HOME'] | literal",
        f"lipsum.__globals__['__builtins__']['open']('{QRELS}').read() | literal",
        "cycler.__init__.__globals__.os.getcwd() | literal",
        "''.__class__.__mro__ | length",
        "self._TemplateReference__context.get_all() | length",
        "require.__globals__ | length",
        "trec_order._func.__globals__ | length",
    ],
)
def test_templates_cannot_reach_python(tmp_path, escape):
    peek(tmp_path, f"SELECT run_id FROM raw.runs WHERE run_id <> {{{{ {escape} }}}}")
    model_refused(tmp_path, r"(is refused by the sandbox|is undefined)")


def test_templates_cannot_change_a_parameter(tmp_path):
    peek(
        tmp_path,
        "{%- set _ = names.append('b') %}SELECT run_id FROM raw.runs WHERE run_id IN {{ names | literal }}",
        parameters='names = ["a"]',
    )
    model_refused(tmp_path, "is refused by the sandbox")


def test_a_raw_parameter_renders_as_it_is_but_only_as_a_name(tmp_path):
    sql = "SELECT {{ columns | join(', ') }} FROM models.{{ source }}"
    peek(tmp_path, sql, parameters='source = "ranked", columns = ["run_id"]', raw="source, columns", stage="evaluate")
    (tmp_path / "staging" / "ranked.sql").write_text(
        "-- name: ranked\n-- version: 1\n-- stage: prepare\n-- grain: run_id\n-- audits: at_least_one_row\n"
        "-- description: a model to read.\nSELECT run_id FROM raw.runs\n"
    )
    project = Project.load(tmp_path)
    assert project.references["peek"] == {"models.ranked"}
    assert render(project.models["peek"]).strip() == "SELECT run_id FROM models.ranked"
    model_refused(
        tmp_path, r"parameter source is declared raw and must be a plain name", {"source": "ranked, gate.qrels"}
    )
    model_refused(tmp_path, r"parameter columns is declared raw .*, not '\(SELECT", {"columns": ["(SELECT 1)"]})


@pytest.mark.parametrize(
    ("raw", "message"),
    [("nothing", r"raw: nothing is not one of its parameters \(k\)"), ("k", "raw: parameter k is 1; only a string")],
)
def test_a_raw_declaration_names_a_string_parameter(tmp_path, raw, message):
    peek(tmp_path, "SELECT run_id FROM raw.runs WHERE {{ k }} > 0", parameters="k = 1", raw=raw)
    model_refused(tmp_path, message)


def test_compiled_templates_kept_between_processes_render_the_same_sql(tmp_path, monkeypatch):
    models = Project.load().models
    expected = {name: render(model) for name, model in models.items()}
    folder = tmp_path / "templates"
    monkeypatch.setattr(render_module.ENV, "bytecode_cache", TemplateCache(folder))
    for attempt in ("compiled and kept", "read back", "damaged entries compiled again"):
        render_module.compiled.cache_clear()  # as a new process would
        assert {name: render(model) for name, model in models.items()} == expected, attempt
        kept = sorted(folder.glob("*.jinja"))
        assert len(kept) == len({model.template for model in models.values()})
        for path in kept:
            path.write_bytes(path.read_bytes()[:20])
    render_module.compiled.cache_clear()
    # a folder that cannot be written (here: a file in its place) only loses the cache
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    monkeypatch.setattr(render_module.ENV, "bytecode_cache", TemplateCache(blocked / "templates"))
    assert render(models["run_measures"]) == expected["run_measures"]
    render_module.compiled.cache_clear()


def test_a_kept_template_still_renders_in_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.setattr(render_module.ENV, "bytecode_cache", TemplateCache(tmp_path / "templates"))
    for _ in range(2):  # compiled, then read back from the cache
        render_module.compiled.cache_clear()
        peek(tmp_path, "SELECT run_id FROM raw.runs WHERE run_id <> {{ ''.__class__.__mro__ | length }}")
        model_refused(tmp_path, "is refused by the sandbox")
    render_module.compiled.cache_clear()
