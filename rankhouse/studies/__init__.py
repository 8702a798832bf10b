"""The studies, one package each: `rankhouse/studies/<name>/` holds a study's loaders, generators, writer,
report sections, commands and its own DDL, and its `__init__.py` registers them (rankhouse/registry.py),
naming its code as text so that registering imports nothing else. Its models are in models/<name>/
(its staging adapters in models/<name>/staging/), its protocols in studies/. Adding a study adds such a
package, its models folder and its protocol, and touches nothing else: the registry finds every package
here, and every installed package of the entry-point group `rankhouse.studies` (docs/architecture.md,
"A new study").

The names this package held before the study packages (the writers' dispatch, now rankhouse/study/outputs.py)
are still found here, for code written against them.
"""

_MOVED = {"WRITERS", "writer", "built_models", "check_protocol", "check_output_dir", "write_outputs", "summary_table"}


def __getattr__(name: str):  # noqa: ANN202 - the moved names, looked up on first use
    if name in _MOVED:
        from rankhouse.study import outputs

        return getattr(outputs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
