"""Lineage graphs of the model catalog as inline SVG: one model's neighbourhood (what it reads -> the model
-> what reads it) and the whole project's DAG in layers. Plain SVG elements (no script, no external
reference), laid out here in Python, so that the same project gives the same bytes.

    >>> svg = neighbourhood(Project.load(), "measure_ap", lambda name: f"{name}.html")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from rankhouse.warehouse.dag import Project

CHAR = 7.2  # width of one character of the 12px monospace labels
NODE_HEIGHT = 22
ROW = NODE_HEIGHT + 8  # a node and the gap below it
PADDING = 10  # between a label and its box
COLUMN_GAP = 80
MARGIN = 12
SWEEPS = 4  # barycentre passes (down, then up) that order each layer of the project graph
# One fill per model folder; folders beyond the palette reuse it in order.
PALETTE = ("#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#ede9fe", "#cffafe", "#fee2e2", "#e0e7ff", "#ecfccb")
SOURCE_FILL = "#f3f4f6"
FIRST_GROUPS = ("staging", "metrics", "stats")  # the shared layers first; then the studies' folders by name


@dataclass(frozen=True)
class Node:
    """A box of a lineage graph: a model (linked to its page when it has one) or a source table."""

    key: str
    role: str  # parent, child or focus in a neighbourhood; node (or outside its folder) in a layered graph
    group: str | None  # the model's folder; None for a source table (raw.*, gate.*)
    href: str | None
    tooltip: str

    @property
    def width(self) -> float:
        return len(self.key) * CHAR + 2 * PADDING


def group_order(groups: set[str]) -> list[str]:
    """The model folders in catalog order: staging, metrics, stats, then the studies' folders by name.

    >>> group_order({"fusion", "stats", "staging", "lanes"})
    ['staging', 'stats', 'fusion', 'lanes']
    """
    return [g for g in FIRST_GROUPS if g in groups] + sorted(groups - set(FIRST_GROUPS))


def group_fills(project: Project) -> dict[str, str]:
    """Each model folder's fill colour, in catalog order."""
    groups = group_order({m.group for m in project.models.values()})
    return {group: PALETTE[i % len(PALETTE)] for i, group in enumerate(groups)}


def _number(value: float) -> str:
    """Coordinates with one decimal at most: `12`, `12.5`."""
    return f"{value:.1f}".removesuffix(".0")


def _edge(x1: float, y1: float, x2: float, y2: float, source: str, target: str) -> str:
    """A cubic curve from the right side of `source` to the left side of `target`, with an arrowhead."""
    bend = (x2 - x1) / 2
    d = (
        f"M{_number(x1)} {_number(y1)} C{_number(x1 + bend)} {_number(y1)} "
        f"{_number(x2 - bend)} {_number(y2)} {_number(x2)} {_number(y2)}"
    )
    return f'<path class="edge" data-from="{escape(source)}" data-to="{escape(target)}" d="{d}"/>'


def _node(node: Node, x: float, y: float, fill: str) -> str:
    """A labelled box, inside a link when the node has a page."""
    classes = "node" + ("" if node.role == "node" else f" {node.role}") + (" source" if node.group is None else "")
    stroke = ' stroke-width="2.5"' if node.role == "focus" else ""
    box = (
        f'<rect x="{_number(x)}" y="{_number(y)}" width="{_number(node.width)}" height="{NODE_HEIGHT}" rx="4" '
        f'fill="{fill}"{stroke}/>'
        f'<text x="{_number(x + PADDING)}" y="{_number(y + NODE_HEIGHT / 2 + 4)}">{escape(node.key)}</text>'
        f"<title>{escape(node.tooltip)}</title>"
    )
    if node.href is not None:
        box = f'<a href="{escape(node.href)}">{box}</a>'
    faded = ' opacity="0.55"' if node.role == "outside" else ""
    return f'<g class="{classes}" data-model="{escape(node.key)}"{faded}>{box}</g>'


def _svg(columns: list[list[Node]], edges: list[tuple[str, str]], fills: dict[str, str], title: str,
         ident: str = "lineage") -> str:  # fmt: skip
    """Columns of nodes, left to right, each centred vertically, and the edges between them; `ident`
    names the SVG's title and arrowhead (unique within a page)."""
    widths = [max((n.width for n in column), default=0.0) for column in columns]
    height = max(1, *map(len, columns)) * ROW - (ROW - NODE_HEIGHT) + 2 * MARGIN
    width = sum(widths) + COLUMN_GAP * (len(columns) - 1) + 2 * MARGIN
    places: dict[str, tuple[float, float, float]] = {}  # key -> (left, right, middle)
    boxes = []
    x = float(MARGIN)
    for column, column_width in zip(columns, widths):
        top = (height - (len(column) * ROW - (ROW - NODE_HEIGHT))) / 2
        for i, node in enumerate(column):
            y = top + i * ROW
            places[node.key] = (x, x + node.width, y + NODE_HEIGHT / 2)
            boxes.append(_node(node, x, y, SOURCE_FILL if node.group is None else fills[node.group]))
        x += column_width + COLUMN_GAP
    curves = [_edge(places[a][1], places[a][2], places[b][0], places[b][2], a, b) for a, b in edges]
    return "\n".join(
        [
            f'<svg class="lineage" role="img" aria-labelledby="{ident}-title" viewBox="0 0 {_number(width)} '
            f'{_number(height)}" width="{_number(width)}" height="{_number(height)}">',
            f'<title id="{ident}-title">{escape(title)}</title>',
            f'<defs><marker id="{ident}-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0 0 L8 4 L0 8 z" fill="#6b7280"/></marker></defs>',
            f'<g class="edges" fill="none" stroke="#9ca3af" stroke-width="1.2" marker-end="url(#{ident}-arrow)">',
            *curves,
            "</g>",
            '<g class="nodes" font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" '
            'font-size="12" stroke="#6b7280">',
            *boxes,
            "</g>",
            "</svg>",
        ]
    )


def _model_node(project: Project, name: str, role: str, href: Callable[[str], str | None]) -> Node:
    model = project.models[name]
    tooltip = f"{name} ({model.group}, {model.stage}): {model.description}"
    return Node(name, role, model.group, href(name), tooltip)


def sources_of(project: Project, name: str) -> list[str]:
    """The loaded tables (raw.*) and labels (gate.*) a model reads, sorted."""
    return sorted(r for r in project.references[name] if not r.startswith("models."))


def neighbourhood(project: Project, name: str, href: Callable[[str], str | None]) -> str:
    """A model between what it reads (models, then source tables) and what reads it, as an SVG; `href`
    gives a model's page (None: no link)."""
    parents = [_model_node(project, p, "parent", href) for p in project.parents[name]]
    parents += [Node(s, "parent", None, None, f"{s}: a source table, loaded or behind the labels gate")
                for s in sources_of(project, name)]  # fmt: skip
    children = [_model_node(project, c, "child", href) for c in project.children[name]]
    focus = _model_node(project, name, "focus", lambda _: None)
    columns = [column for column in (parents, [focus], children) if column]
    edges = [(p.key, name) for p in parents] + [(name, c.key) for c in children]
    title = f"Lineage of {name}: {len(parents)} input(s), {len(children)} reader(s)"
    return _svg(columns, edges, group_fills(project), title)


def layers(project: Project, names: list[str], edges: list[tuple[str, str]]) -> list[list[str]]:
    """`names` in layers by their longest chain of inputs along `edges` (reader after what it reads),
    each layer ordered to keep edges short (barycentres of the neighbours' positions, a few sweeps down
    and up; ties by folder, then name)."""
    parents: dict[str, list[str]] = {n: [] for n in names}
    children: dict[str, list[str]] = {n: [] for n in names}
    for a, b in edges:
        parents[b].append(a)
        children[a].append(b)
    depth: dict[str, int] = {}
    for name in (n for n in project.order if n in parents):
        depth[name] = 1 + max((depth[p] for p in parents[name]), default=-1)
    ranks = {g: i for i, g in enumerate(group_order({project.models[n].group for n in names}))}
    result: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for name in sorted(names, key=lambda n: (ranks[project.models[n].group], n)):
        result[depth[name]].append(name)
    position = {n: i for layer in result for i, n in enumerate(layer)}

    def centre(name: str, neighbours: dict[str, list[str]]) -> float:
        near = [position[n] for n in neighbours[name]]
        return sum(near) / len(near) if near else position[name]

    for _ in range(SWEEPS):
        for sweep, neighbours in ((result[1:], parents), (result[-2::-1], children)):
            for layer in sweep:
                layer.sort(key=lambda n: (centre(n, neighbours), position[n], n))
                position.update({n: i for i, n in enumerate(layer)})
    return result


def _layered(project: Project, names: list[str], edges: list[tuple[str, str]], href: Callable[[str], str | None],
             role: Callable[[str], str], title: str, ident: str) -> str:  # fmt: skip
    columns = [[_model_node(project, n, role(n), href) for n in layer] for layer in layers(project, names, edges)]
    return _svg(columns or [[]], edges, group_fills(project), title, ident)


def project_graph(project: Project, names: list[str], href: Callable[[str], str | None]) -> str:
    """Every model of `names` and the edges among them, in layers left to right (source tables are left
    out: only staging models read them)."""
    chosen = set(names)
    edges = sorted((p, n) for n in names for p in project.parents[n] if p in chosen)
    title = f"The models' lineage: {len(names)} models, {len(edges)} dependencies"
    return _layered(project, names, edges, href, lambda _: "node", title, "project")


def folder_graph(project: Project, group: str, names: list[str], href: Callable[[str], str | None]) -> str:
    """The models of one folder (those of `names` in it), with the models of `names` outside it that
    they read or that read them, and those edges, in layers left to right."""
    chosen = set(names)
    members = {n for n in names if project.models[n].group == group}
    edges = sorted({(p, n) for n in members for p in project.parents[n] if p in chosen}
                   | {(n, c) for n in members for c in project.children[n] if c in chosen})  # fmt: skip
    shown = sorted({n for edge in edges for n in edge} | members)
    title = f"The lineage of models/{group}/: {len(members)} models and {len(shown) - len(members)} neighbours"
    ident = "folder-" + "".join(c if c.isalnum() else "-" for c in group)
    return _layered(project, shown, edges, href, lambda n: "node" if n in members else "outside", title, ident)
