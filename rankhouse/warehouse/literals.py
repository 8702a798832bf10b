"""SQL literals of Python values (`literal`), and the text of a string parameter while a template renders
(`ParameterText`), which renders only as one literal (render.py says how; RENDERING is the render under way).
Apart from render.py, whose jinja2 and sqlglot it does not need: the warehouse's own SQL (a study's slice of
the inputs, comments on a model) quotes values with it without importing either.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

from rankhouse.errors import RankhouseError

if TYPE_CHECKING:
    from rankhouse.warehouse.render import Literals


class ParameterText(str):
    """The text of a string parameter (or of a string in a list or table parameter) while a template
    renders: it renders as a SQL literal, and every way of making other text of it is refused."""

    name: str

    def __new__(cls, text: str = "", name: str = "") -> ParameterText:
        self = super().__new__(cls, text)
        self.name = name
        return self

    def __repr__(self) -> str:
        return f"<parameter {self.name}>"

    def misuse(self, how: str) -> str:
        """The message when the template makes text of the parameter by `how`."""
        n = self.name
        return (
            f"a string of parameter {n} renders only as a SQL literal ({{{{ {n} }}}} or {{{{ {n} | literal }}}}), "
            f"as a name ({{{{ {n} | identifier }}}}) or, declared `-- raw: {n}` in the header, as it is; "
            f"the template makes text of it with {how}"
        )


def _refuse(how: str):
    def refused(self: ParameterText, *args: object, **kwargs: object):
        raise RankhouseError(self.misuse(how))

    return refused


for _name in ("capitalize casefold center encode expandtabs format format_map join ljust lower lstrip partition "
              "removeprefix removesuffix replace rjust rpartition rsplit rstrip split splitlines strip swapcase "
              "title translate upper zfill").split():  # fmt: skip
    setattr(ParameterText, _name, _refuse(f".{_name}()"))
for _name, _how in (("__str__", "str() (~, | join, % and the like)"), ("__format__", "format()"),
                    ("__getitem__", "an index or a slice"), ("__iter__", "iteration over its characters"),
                    ("__add__", "+"), ("__radd__", "+"), ("__mul__", "*"), ("__rmul__", "*"),
                    ("__mod__", "%"), ("__rmod__", "%")):  # fmt: skip
    setattr(ParameterText, _name, _refuse(_how))


def quote(text: str) -> str:
    """Text as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def number(value: int | float) -> str:
    """A number as SQL: its repr, in parentheses when negative (so that `x -{{ n }}` is no comment)."""
    text = repr(value)
    return f"({text})" if text.startswith("-") else text


def literal(value: object) -> str:
    """A Python value as a SQL literal: strings quoted, None as NULL, booleans as TRUE/FALSE, a list
    as a parenthesised list for `IN` (an empty list as `(NULL)`, which matches nothing).

    >>> literal("it's"), literal(None), literal(True), literal(2.5), literal(["a", "b"]), literal([])
    ("'it''s'", 'NULL', 'TRUE', '2.5', "('a', 'b')", '(NULL)')
    """
    if isinstance(value, (list, tuple)):
        return "(" + (", ".join(literal(v) for v in value) or "NULL") + ")"
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, ParameterText):
        literals = RENDERING.get()
        return literals.placeholder(value) if literals else quote(str.__str__(value))
    return quote(str(value))


RENDERING: contextvars.ContextVar[Literals | None] = contextvars.ContextVar("rendering", default=None)
