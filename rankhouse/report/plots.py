"""The report's figures: small functions that turn rows a model produced into SVG text.

Every function draws what it is given and computes no measure, interval or test: its geometry (scales,
ticks, bins, the order of sorted values) is the only arithmetic here. Each figure is accessible (a
`<title>` and a `<desc>` that the SVG's aria-labelledby names, axis labels as text) and deterministic:
the same input gives the same bytes (coordinates with two decimals, numbers through `number`). Each mark
carries its data as attributes (`data-label`, `data-value`, ...: Python's shortest round-trip text of
each number), so that a test, or a reader, can check a figure against the table it came from.

    >>> svg = bars("demo", "Hits", [Bar("a", (3.0,)), Bar("b", (5.0,))], ["hits"], axis="hits")
    >>> svg.startswith("<svg") and 'data-label="b"' in svg and svg == bars(
    ...     "demo", "Hits", [Bar("a", (3.0,)), Bar("b", (5.0,))], ["hits"], axis="hits")
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

# Okabe and Ito's colour-blind-safe palette, without its yellow (too light on white).
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000")
WIN, LOSS, MUTED, INK, GRID = "#009E73", "#D55E00", "#d9d9d9", "#222222", "#ececec"
FONT = 'font-family="system-ui, -apple-system, \'Segoe UI\', Helvetica, Arial, sans-serif" font-size="12"'
WIDTH = 720  # every figure's width in px; heights follow the rows
CHAR = 6.6  # the width of one character at 12 px, roughly, for label columns


@dataclass(frozen=True)
class Interval:
    """A forest plot's row: an estimate and its interval."""

    label: str
    estimate: float
    low: float
    high: float
    note: str = ""


@dataclass(frozen=True)
class Bar:
    """A bar chart's row: one value per series (None: no bar), and optionally the total each value is out of
    (drawn as a light track behind the bar)."""

    label: str
    values: Sequence[float | None]
    totals: Sequence[float | None] | None = None


@dataclass(frozen=True)
class Ranks:
    """A rank-change plot's row: an item's rank before, and per series its rank after (None: not ranked at
    all, e.g. removed by a filter); a series missing from `after` is not drawn for the item."""

    label: str
    before: int
    after: Mapping[str, int | None] = field(default_factory=dict)


def number(value: float | int | None, places: int = 4, signed: bool = False) -> str:
    """A number as every figure and table of the report writes it: whole numbers with thousands separators,
    others with `places` decimals (a sign with `signed`), None as an empty text.

    >>> number(3080), number(0.12345), number(-0.5, signed=True), number(0.1, 2, signed=True), number(None)
    ('3,080', '0.1235', '-0.5000', '+0.10', '')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:+,}" if signed else f"{value:,}"
    return f"{value:+,.{places}f}" if signed else f"{value:,.{places}f}"


def _c(value: float) -> str:
    """A coordinate: two decimals, no negative zero."""
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _data(value: float | int | None) -> str:
    """A mark's data attribute: the shortest text that reads back as the same number; empty for None."""
    return "" if value is None else repr(float(value)) if isinstance(value, float) else str(value)


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{_c(x)}" y="{_c(y)}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [low, high].

    >>> ticks(0.0, 1.0), ticks(-0.13, 0.42)
    ([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], [-0.2, 0.0, 0.2, 0.4, 0.6])
    """
    if not high > low:
        low, high = (low - 1, high + 1) if low == 0 else (low - abs(low) / 2, high + abs(high) / 2)
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return [round(i * step, 12) + 0.0 for i in range(first, last + 1)]


def _places(values: Sequence[float]) -> int:
    """Decimals enough to tell the ticks apart (the same for every tick of an axis)."""
    if len(values) < 2:
        return 0
    step = abs(values[1] - values[0])
    return 0 if step >= 1 else min(6, math.ceil(-math.log10(step) - 1e-9))


class Scale:
    """A linear (or log10) map from a domain to pixels."""

    def __init__(self, low: float, high: float, start: float, end: float, log: bool = False) -> None:
        self.log = log
        self.low, self.high = (math.log10(low), math.log10(high)) if log else (low, high)
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        v = math.log10(value) if self.log else value
        span = self.high - self.low or 1.0
        return self.start + (v - self.low) / span * (self.end - self.start)


def _svg(ident: str, title: str, desc: str, height: float, body: list[str], width: float = WIDTH) -> str:
    """The figure's root: size, accessible title and description, then the marks."""
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(ident)}" class="figure" role="img" '
        f'aria-labelledby="{escape(ident)}-title {escape(ident)}-desc" width="{_c(width)}" height="{_c(height)}" '
        f'viewBox="0 0 {_c(width)} {_c(height)}" {FONT} fill="{INK}">',
        f'<title id="{escape(ident)}-title">{escape(title)}</title>',
        f'<desc id="{escape(ident)}-desc">{escape(desc)}</desc>',
        *body,
        "</svg>",
    ])  # fmt: skip


def _x_axis(scale: Scale, values: list[float], top: float, bottom: float, label: str, log: bool = False) -> list[str]:
    """Vertical grid lines at the ticks, their labels under the plot and the axis label below them."""
    places = _places(values)
    out = [f'<g class="axis x" data-axis="{escape(label)}">']
    for value in values:
        x = scale(value)
        out.append(f'<line x1="{_c(x)}" y1="{_c(top)}" x2="{_c(x)}" y2="{_c(bottom)}" stroke="{GRID}"/>')
        shown = f"{int(value):,}" if log else number(value, places) if places else number(int(round(value)))
        out.append(_text(x, bottom + 14, shown, "middle"))
    middle = (scale.start + scale.end) / 2
    out.append(_text(middle, bottom + 30, label, "middle", ' font-weight="600"'))
    out.append("</g>")
    return out


def _legend(series: Sequence[str], x: float, y: float, shape: str = "rect") -> list[str]:
    """Colour keys for the series, left to right from (x, y)."""
    out = ['<g class="legend">']
    for i, name in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        if shape == "circle":
            out.append(f'<circle cx="{_c(x + 5)}" cy="{_c(y - 4)}" r="4" fill="{colour}"/>')
        else:
            out.append(f'<rect x="{_c(x)}" y="{_c(y - 9)}" width="10" height="10" fill="{colour}"/>')
        out.append(_text(x + 14, y, name))
        x += 14 + CHAR * len(name) + 16
    out.append("</g>")
    return out


def _label_width(labels: Sequence[str]) -> float:
    """The width of a column of labels drawn right-aligned at its edge: the longest fits (the figure
    widens rather than clip a label such as balance_not_updated_after_cheque_or_cash_deposit)."""
    return 12 + CHAR * max([len(label) for label in labels] or [0])


def _interval(r: Interval, signed: bool) -> str:
    return f"{number(r.estimate, signed=signed)} [{number(r.low, signed=signed)}, {number(r.high, signed=signed)}]"


def forest(ident: str, title: str, rows: Sequence[Interval], *, axis: str, desc: str = "", signed: bool = True) -> str:
    """A forest plot: per row a square at the estimate and a line over its interval, a dashed line at 0,
    the label on the left and `estimate [low, high]` on the right (with signs: differences).

    Example: forest("forest-top-1", "Contrasts", [Interval("dense - bm25", 0.12, 0.11, 0.13)], axis="Top-1")
    """
    left = _label_width([r.label + (f" ({r.note})" if r.note else "") for r in rows])
    right_text = 196
    width = max(WIDTH, left + 380 + right_text)
    top, row_height = 28, 22
    bottom = top + row_height * max(len(rows), 1)
    values = [v for r in rows for v in (r.estimate, r.low, r.high)] + [0.0]
    tick_values = ticks(min(values), max(values))
    scale = Scale(tick_values[0], tick_values[-1], left + 8, width - right_text - 8)
    body = _x_axis(scale, tick_values, top - 6, bottom, axis)
    zero = scale(0.0)
    body.append(f'<line x1="{_c(zero)}" y1="{_c(top - 6)}" x2="{_c(zero)}" y2="{_c(bottom)}" stroke="{INK}" '
                'stroke-dasharray="4 3"/>')  # fmt: skip
    body.append(_text(width - right_text + 4, top - 12, "estimate [95% interval]", extra=' font-weight="600"'))
    for i, r in enumerate(rows):
        y = top + row_height * i + row_height / 2
        colour = COLOURS[0] if not r.note else COLOURS[1]
        body += [
            f'<g class="mark" data-label="{escape(r.label)}" data-estimate="{_data(r.estimate)}" '
            f'data-low="{_data(r.low)}" data-high="{_data(r.high)}">',
            _text(left, y + 4, r.label + (f" ({r.note})" if r.note else ""), "end"),
            f'<line x1="{_c(scale(r.low))}" y1="{_c(y)}" x2="{_c(scale(r.high))}" y2="{_c(y)}" stroke="{colour}" '
            'stroke-width="2"/>',
            f'<rect x="{_c(scale(r.estimate) - 4)}" y="{_c(y - 4)}" width="8" height="8" fill="{colour}"/>',
            _text(width - right_text + 4, y + 4, _interval(r, signed)),
            "</g>",
        ]  # fmt: skip
    summary = "; ".join(f"{r.label}: {_interval(r, signed)}" for r in rows)
    return _svg(ident, title, f"{desc} {summary}".strip(), bottom + 40, body, width)


def sorted_differences(ident: str, title: str, values: Sequence[float], *, axis: str, desc: str = "") -> str:
    """Per-query differences a - b sorted from the largest win to the largest loss: one step per query,
    green above 0 (a wins), red below (a loses), the ties on the zero line; the counts in the corner.

    Example: sorted_differences("d", "dense - bm25", [1.0, 0.0, -1.0, 1.0], axis="Top-1, a - b")
    """
    ordered = sorted(values, reverse=True)
    n = len(ordered)
    wins, losses = sum(v > 0 for v in ordered), sum(v < 0 for v in ordered)
    ties = n - wins - losses
    left, right, top, bottom = 56, WIDTH - 16, 24, 204
    tick_values = ticks(min(ordered + [0.0]), max(ordered + [0.0]), 4)
    y = Scale(tick_values[0], tick_values[-1], bottom, top)
    x = Scale(0, max(n, 1), left, right)
    body = ['<g class="axis y">']
    places = _places(tick_values)
    for value in tick_values:
        body.append(f'<line x1="{_c(left)}" y1="{_c(y(value))}" x2="{_c(right)}" y2="{_c(y(value))}" stroke="{GRID}"/>')
        body.append(_text(left - 6, y(value) + 4, number(value, places), "end"))
    body.append(_text(14, (top + bottom) / 2, axis, "middle",
                      f' font-weight="600" transform="rotate(-90 14 {_c((top + bottom) / 2)})"'))  # fmt: skip
    body.append("</g>")
    zero = y(0.0)
    for name, colour, chosen in (("wins", WIN, lambda v: v > 0), ("losses", LOSS, lambda v: v < 0)):
        steps, i = [], 0
        while i < n:  # runs of equal values are one horizontal step
            j = i
            while j < n and ordered[j] == ordered[i]:
                j += 1
            if chosen(ordered[i]):
                steps.append(f"L{_c(x(i))},{_c(y(ordered[i]))} H{_c(x(j))}")
            i = j
        if steps:
            start = next(k for k, v in enumerate(ordered) if chosen(v))
            end = max(k for k, v in enumerate(ordered) if chosen(v)) + 1
            path = f"M{_c(x(start))},{_c(zero)} " + " ".join(steps) + f" L{_c(x(end))},{_c(zero)} Z"
            body.append(f'<path class="mark" data-series="{name}" d="{path}" fill="{colour}" fill-opacity="0.75" '
                        f'stroke="{colour}" stroke-width="0.5"/>')  # fmt: skip
    body.append(f'<line x1="{_c(left)}" y1="{_c(zero)}" x2="{_c(right)}" y2="{_c(zero)}" stroke="{INK}"/>')
    body.append(_text(left, bottom + 16, f"{n:,} queries, sorted by the difference", extra=' font-weight="600"'))
    body.append(_text(right, bottom + 16, f"wins {wins:,}   ties {ties:,}   losses {losses:,}", "end"))
    full = f"{desc} {n:,} queries: {wins:,} wins (a - b > 0), {ties:,} ties, {losses:,} losses.".strip()
    root = _svg(ident, title, full, bottom + 28, body)
    counts = f'data-queries="{n}" data-wins="{wins}" data-ties="{ties}" data-losses="{losses}"'
    axis = f'data-y-low="{_data(tick_values[0])}" data-y-high="{_data(tick_values[-1])}"'
    plot = f'data-plot="{left} {top} {right} {bottom}"'
    return root.replace(' class="figure"', f' class="figure" {counts} {axis} {plot}', 1)


def bars(
    ident: str, title: str, rows: Sequence[Bar], series: Sequence[str], *, axis: str, desc: str = "",
    places: int = 4,
) -> str:  # fmt: skip
    """Horizontal bars, one group per row and one bar per series (a light track behind a bar shows the total
    its value is out of), the value at the end of each bar when there are at most two series (the marks'
    data and the description carry it otherwise); negative values extend left of 0.

    Example: bars("b", "Hits", [Bar("atm_support", (31.0, 35.0), (40.0, 40.0))], ["bm25", "dense"], axis="hits")
    """
    left = _label_width([r.label for r in rows])
    right_text = 64
    width = max(WIDTH, left + 8 + 400 + right_text)
    labelled = len(series) <= 2  # room for each bar's value beside it
    bar_height, gap = (12, 6) if labelled else (7, 6)
    group = bar_height * len(series) + gap
    top = 30 if len(series) > 1 else 12
    bottom = top + group * max(len(rows), 1)
    values = [v for r in rows for v in r.values if v is not None]
    values += [t for r in rows for t in (r.totals or ()) if t is not None]
    tick_values = ticks(min(values + [0.0]), max(values + [0.0]))
    scale = Scale(tick_values[0], tick_values[-1], left + 8, width - right_text)
    body = _legend(series, left + 8, 14) if len(series) > 1 else []
    body += _x_axis(scale, tick_values, top - 4, bottom, axis)
    zero = scale(0.0)
    for i, r in enumerate(rows):
        y0 = top + group * i
        body.append(_text(left, y0 + group / 2, r.label, "end"))
        for k, value in enumerate(r.values):
            y = y0 + bar_height * k
            total = r.totals[k] if r.totals else None
            if total is not None:
                body.append(f'<rect x="{_c(zero)}" y="{_c(y)}" width="{_c(scale(total) - zero)}" '
                            f'height="{bar_height - 1}" fill="{MUTED}"/>')  # fmt: skip
            if value is None:
                continue
            x0, x1 = sorted((zero, scale(value)))
            shown = number(value, places) if not float(value).is_integer() or places else number(int(value))
            if total is not None:
                shown += f" of {number(int(total)) if float(total).is_integer() else number(total, places)}"
            body.append(
                f'<rect class="mark" data-label="{escape(r.label)}" data-series="{escape(series[k])}" '
                f'data-value="{_data(value)}" data-total="{_data(total)}" x="{_c(x0)}" y="{_c(y)}" '
                f'width="{_c(x1 - x0)}" height="{bar_height - 1}" fill="{COLOURS[k % len(COLOURS)]}"/>'
            )
            end = max(x1, scale(total)) if total is not None else x1
            if labelled:
                body.append(_text(end + 4, y + bar_height - 2, shown, extra=' font-size="10"'))
    body.append(f'<line x1="{_c(zero)}" y1="{_c(top - 4)}" x2="{_c(zero)}" y2="{_c(bottom)}" stroke="{INK}"/>')
    summary = "; ".join(
        f"{r.label}: "
        + ", ".join(
            f"{name} {number(v, places) if places or not float(v).is_integer() else number(int(v))}"
            + (f" of {number(int(t)) if float(t).is_integer() else number(t, places)}" if t is not None else "")
            for name, v, t in zip(series, r.values, r.totals or [None] * len(series))
            if v is not None
        )
        for r in rows
    )
    return _svg(ident, title, f"{desc or title} {summary}.", bottom + 40, body, width)


def histogram(ident: str, title: str, values: Sequence[float], *, axis: str, desc: str = "", bins: int = 12) -> str:
    """A histogram of `values` over round bin edges (about `bins` bins); each bar counts the values in
    [low, high), the last bin also its upper edge.

    Example: histogram("k", "k_t", [203.0, 303.0, 648.0], axis="k_t")
    """
    edges = ticks(min(values), max(values), bins) if values else [0.0, 1.0]
    if len(edges) < 2:
        edges = [edges[0], edges[0] + 1]
    counts = [0] * (len(edges) - 1)
    for v in values:
        k = min(max(next((i for i in range(len(edges) - 1) if v < edges[i + 1]), len(counts) - 1), 0), len(counts) - 1)
        counts[k] += 1
    left, right, top, bottom = 56, WIDTH - 16, 16, 196
    count_ticks = ticks(0, max(counts + [1]), 4)
    y = Scale(0, count_ticks[-1], bottom, top)
    x = Scale(edges[0], edges[-1], left, right)
    body = ['<g class="axis y">']
    for value in count_ticks:
        body.append(f'<line x1="{_c(left)}" y1="{_c(y(value))}" x2="{_c(right)}" y2="{_c(y(value))}" stroke="{GRID}"/>')
        body.append(_text(left - 6, y(value) + 4, number(int(value)), "end"))
    body.append(_text(14, (top + bottom) / 2, "count", "middle",
                      f' font-weight="600" transform="rotate(-90 14 {_c((top + bottom) / 2)})"'))  # fmt: skip
    body.append("</g>")
    body += _x_axis(x, edges, bottom, bottom, axis)
    for k, count in enumerate(counts):
        x0, x1 = x(edges[k]), x(edges[k + 1])
        body.append(
            f'<rect class="mark" data-low="{_data(edges[k])}" data-high="{_data(edges[k + 1])}" data-value="{count}" '
            f'x="{_c(x0 + 1)}" y="{_c(y(count))}" width="{_c(x1 - x0 - 2)}" height="{_c(bottom - y(count))}" '
            f'fill="{COLOURS[0]}"/>'
        )
        if count:
            body.append(_text((x0 + x1) / 2, y(count) - 3, number(count), "middle", ' font-size="10"'))
    full = f"{desc} {len(values):,} values, from {number(min(values), 0) if values else ''} to " \
           f"{number(max(values), 0) if values else ''}.".strip()  # fmt: skip
    return _svg(ident, title, full, bottom + 40, body)


def rank_change(
    ident: str, title: str, rows: Sequence[Ranks], series: Sequence[str], *, axis: str, desc: str = ""
) -> str:
    """Ranks before and after, one row per item on a log rank axis: a hollow circle at the rank before, a
    filled dot per series at its rank after joined to it by a thin line; an item a series does not rank
    (None) gets a cross at the right edge, under `not ranked`.

    Example: rank_change("r", "C1", [Ranks("doc 7", 1, {"penalty-1": 40, "hard-filter": None})],
                         ["penalty-1", "hard-filter"], axis="rank")
    """
    left = _label_width([r.label for r in rows])
    right_gutter = 86
    width = max(WIDTH, left + 8 + 400 + right_gutter)
    top, row_height = 34, 18
    bottom = top + row_height * max(len(rows), 1)
    ranked = [r.before for r in rows] + [a for r in rows for a in r.after.values() if a is not None]
    high = 10 ** math.ceil(math.log10(max(ranked + [10])))
    scale = Scale(1, high, left + 8, width - right_gutter, log=True)
    tick_values = [float(m * 10**p) for p in range(int(math.log10(high)) + 1) for m in (1, 2, 5) if m * 10**p <= high]
    body = _rank_legend(series, left + 8, 14)
    body += _x_axis(scale, tick_values, top - 4, bottom, axis, log=True)
    removed_x = width - right_gutter + 40
    body.append(_text(removed_x, top - 8, "not ranked", "middle", ' font-size="10"'))
    for i, r in enumerate(rows):
        y = top + row_height * i + row_height / 2
        x0 = scale(r.before)
        body.append(_text(left, y + 4, r.label, "end"))
        for k, name in enumerate(series):
            if name not in r.after:
                continue
            after = r.after[name]
            colour = COLOURS[k % len(COLOURS)]
            offset = (k - (len(series) - 1) / 2) * 2.5  # the series side by side when they coincide
            attrs = (f'class="mark" data-label="{escape(r.label)}" data-series="{escape(name)}" '
                     f'data-before="{r.before}" data-after="{"" if after is None else after}"')  # fmt: skip
            if after is None:
                body.append(f'<g {attrs}><line x1="{_c(x0)}" y1="{_c(y + offset)}" x2="{_c(removed_x)}" '
                            f'y2="{_c(y + offset)}" stroke="{colour}" stroke-opacity="0.35"/>'
                            f'<path d="M{_c(removed_x - 3)},{_c(y + offset - 3)} l6,6 m0,-6 l-6,6" stroke="{colour}" '
                            'stroke-width="1.5"/></g>')  # fmt: skip
            else:
                xa = scale(after)
                body.append(f'<g {attrs}><line x1="{_c(x0)}" y1="{_c(y + offset)}" x2="{_c(xa)}" y2="{_c(y + offset)}" '
                            f'stroke="{colour}" stroke-opacity="0.5"/><circle cx="{_c(xa)}" cy="{_c(y + offset)}" '
                            f'r="3" fill="{colour}"/></g>')  # fmt: skip
        body.append(f'<circle cx="{_c(x0)}" cy="{_c(y)}" r="4" fill="white" stroke="{INK}" stroke-width="1.5"/>')
    summary = "; ".join(
        f"{r.label}: {r.before} -> "
        + ", ".join(
            f"{name} {'not ranked' if r.after[name] is None else r.after[name]}" for name in series if name in r.after
        )
        for r in rows
    )
    return _svg(ident, title, f"{desc or title} {summary}.", bottom + 40, body, width)


def _rank_legend(series: Sequence[str], x: float, y: float) -> list[str]:
    out = ['<g class="legend">', f'<circle cx="{_c(x + 5)}" cy="{_c(y - 4)}" r="4" fill="white" stroke="{INK}"/>',
           _text(x + 14, y, "before")]  # fmt: skip
    return out + _legend(series, x + 14 + CHAR * 6 + 16, y, "circle")[1:]


@dataclass(frozen=True)
class Point:
    """A scatter plot's point: x, y, optionally y's interval, in a series, with a label."""

    series: str
    x: float
    y: float
    low: float | None = None
    high: float | None = None
    label: str = ""


def scatter(
    ident: str, title: str, points: Sequence[Point], *, x_axis: str, y_axis: str, desc: str = "",
    diagonal: bool = False, connect: bool = False,
) -> str:  # fmt: skip
    """Points (a colour per series) with their vertical intervals where given, on linear axes; `diagonal`
    draws the line y = x (a calibration plot: measured against nominal, measured against predicted),
    `connect` joins each series' points in x order.

    Example: scatter("c", "Calibration", [Point("bm25", 0.05, 0.043, 0.041, 0.045)], x_axis="level",
                     y_axis="share admitted", diagonal=True)
    """
    series = list(dict.fromkeys(p.series for p in points))
    left, right, top, bottom = 64, WIDTH - 16, 30, 290
    xs = [p.x for p in points]
    ys = [v for p in points for v in (p.y, p.low, p.high) if v is not None]
    if diagonal:
        xs, ys = xs + ys, ys + xs
    x_ticks = ticks(min(xs or [0.0]), max(xs or [1.0]))
    x = Scale(x_ticks[0], x_ticks[-1], left, right)
    y_ticks = ticks(min(ys or [0.0]), max(ys or [1.0]))
    y = Scale(y_ticks[0], y_ticks[-1], bottom, top)
    body = _legend(series, left, 14, "circle") if len(series) > 1 else []
    body.append('<g class="axis y">')
    places = _places(y_ticks)
    for value in y_ticks:
        body.append(f'<line x1="{_c(left)}" y1="{_c(y(value))}" x2="{_c(right)}" y2="{_c(y(value))}" stroke="{GRID}"/>')
        body.append(_text(left - 6, y(value) + 4, number(value, places) if places else number(int(value)), "end"))
    body.append(_text(14, (top + bottom) / 2, y_axis, "middle",
                      f' font-weight="600" transform="rotate(-90 14 {_c((top + bottom) / 2)})"'))  # fmt: skip
    body.append("</g>")
    body += _x_axis(x, x_ticks, top, bottom, x_axis)
    if diagonal:
        low, high = max(x_ticks[0], y_ticks[0]), min(x_ticks[-1], y_ticks[-1])
        if high > low:
            body.append(f'<line class="diagonal" x1="{_c(x(low))}" y1="{_c(y(low))}" x2="{_c(x(high))}" '
                        f'y2="{_c(y(high))}" stroke="{INK}" stroke-dasharray="4 3"/>')  # fmt: skip
    for k, name in enumerate(series):
        colour = COLOURS[k % len(COLOURS)]
        mine = sorted((p for p in points if p.series == name), key=lambda p: p.x)
        if connect and len(mine) > 1:
            path = " ".join(f"{'M' if i == 0 else 'L'}{_c(x(p.x))},{_c(y(p.y))}" for i, p in enumerate(mine))
            body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-opacity="0.6"/>')
        for p in mine:
            cx, cy = x(p.x), y(p.y)
            attrs = (f'class="mark" data-series="{escape(name)}" data-label="{escape(p.label)}" data-x="{_data(p.x)}" '
                     f'data-y="{_data(p.y)}" data-low="{_data(p.low)}" data-high="{_data(p.high)}"')  # fmt: skip
            whisker = ""
            if p.low is not None and p.high is not None:
                whisker = (f'<line x1="{_c(cx)}" y1="{_c(y(p.low))}" x2="{_c(cx)}" y2="{_c(y(p.high))}" '
                           f'stroke="{colour}" stroke-width="1.5"/>')  # fmt: skip
            body.append(f'<g {attrs}>{whisker}<circle cx="{_c(cx)}" cy="{_c(cy)}" r="3.5" fill="{colour}"/></g>')
    summary = "; ".join(
        f"{p.series}{' ' + p.label if p.label else ''}: x {number(p.x)}, y {number(p.y)}"
        + (f" [{number(p.low)}, {number(p.high)}]" if p.low is not None and p.high is not None else "")
        for p in points
    )
    return _svg(ident, title, f"{desc or title} {summary}.", bottom + 40, body)


def heatmap(
    ident: str, title: str, cells: Mapping[tuple[str, str], float], rows: Sequence[str], columns: Sequence[str], *,
    x_axis: str, y_axis: str, desc: str = "",
) -> str:  # fmt: skip
    """A grid of shares: one cell per (row, column), shaded from white (0) to the first colour (the largest
    share), the share written in it (as a percentage); a cell that is missing is empty.

    Example: heatmap("h", "Joint p", {("floor", "floor"): 0.25}, ["floor"], ["floor"], x_axis="dense p",
                     y_axis="bm25 p")
    """
    cell_w, cell_h = 72, 26
    left, top = 64 + _label_width(rows), 30
    width = max(WIDTH // 2, left + cell_w * len(columns) + 16)
    bottom = top + cell_h * len(rows)
    largest = max(cells.values(), default=0.0) or 1.0
    body = [_text(14, (top + bottom) / 2, y_axis, "middle",
                  f' font-weight="600" transform="rotate(-90 14 {_c((top + bottom) / 2)})"')]  # fmt: skip
    for j, column in enumerate(columns):
        body.append(_text(left + cell_w * (j + 0.5), top - 8, column, "middle"))
    for i, row in enumerate(rows):
        body.append(_text(left - 6, top + cell_h * (i + 0.5) + 4, row, "end"))
        for j, column in enumerate(columns):
            value = cells.get((row, column))
            x0, y0 = left + cell_w * j, top + cell_h * i
            shade = 0.0 if value is None else value / largest
            body.append(
                f'<rect class="mark" data-row="{escape(row)}" data-column="{escape(column)}" '
                f'data-value="{_data(value)}" x="{_c(x0)}" y="{_c(y0)}" width="{cell_w - 1}" '
                f'height="{cell_h - 1}" fill="{COLOURS[0]}" fill-opacity="{shade:.3f}" stroke="{GRID}"/>'
            )
            if value is not None:
                ink = "white" if shade > 0.55 else INK
                body.append(_text(x0 + cell_w / 2, y0 + cell_h / 2 + 4, f"{100 * value:.1f}%", "middle",
                                  f' fill="{ink}" font-size="11"'))  # fmt: skip
    body.append(_text(left + cell_w * len(columns) / 2, bottom + 18, x_axis, "middle", ' font-weight="600"'))
    summary = "; ".join(f"{r} x {c}: {100 * v:.1f}%" for (r, c), v in cells.items())
    return _svg(ident, title, f"{desc or title} {summary}.", bottom + 30, body, width)
