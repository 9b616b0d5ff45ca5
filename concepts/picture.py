"""A readable picture of a subject's map at any size, written here as inline SVG.

What is drawn: the `limit` most central concepts (PageRank: the hubs everything builds
on) and the prerequisite edges between them; the caption says how many concepts and
edges are not drawn (all of them are in the teaching order under the picture).

Layout, left to right: a concept stands right of everything it builds on among the drawn
(the longest path over the drawn subgraph; a cycle is collapsed to one layer), so every
arrow between layers points right, from a prerequisite to what builds on it. Within a
layer concepts are ordered by the mean row of their neighbours (barycentre sweeps), which
removes most crossings; a layer taller than MAX_ROWS wraps into more columns. Drawn
concepts with no edge to another drawn concept stand apart on the right under a heading,
and the caption explains why (no edge at all in the map, or only edges to concepts not
drawn).

Labels: a node is a box holding its name. Box widths come from the DejaVu Sans metrics
shipped with matplotlib, and the SVG text is given that length (`textLength`), so a
browser draws each name inside its box whatever font it has. Boxes are placed in columns
as wide as their widest box, so no two overlap by construction; `Picture.overlapping()`
checks the computed boxes (the tests assert it). No network, no JavaScript; each node is
a link to its concept page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path

from concepts.models import (
    READINESS_BAND_LABELS,
    READINESS_CONFIRMED,
    READINESS_EXPLAINED,
    READINESS_NAMED,
    READINESS_TAUGHT,
    readiness_band,
    readiness_label,
)

# Band colours, colour-blind safe (Okabe-Ito); boxes use them as a light tint.
BAND_COLOURS = {
    READINESS_NAMED: "#E69F00",  # only named
    READINESS_EXPLAINED: "#56B4E9",  # explained by a file
    READINESS_CONFIRMED: "#009E73",  # confirmed by a check
    READINESS_TAUGHT: "#CC79A7",  # taught by a person
}
# The legend's words are the bands' one vocabulary (the admin's tables use it too).
BAND_LABELS = {band: readiness_label(band) for band in READINESS_BAND_LABELS}

# How many concepts the picture draws by default, and at most (a teacher may ask for more).
DEFAULT_DRAWN = 40
MAX_DRAWN = 150
# Geometry in SVG pixels.
FONT_SIZE = 12
BOX_HEIGHT = 22
ROW_GAP = 8
COLUMN_GAP = 64  # room for the arrows between two columns
LOOP_OUTSET = 26  # how far an edge inside one column bulges to its right
PAD_X = 7
MARGIN = 12
HEADING_HEIGHT = 18
MAX_ROWS = 16
LABEL_MAX_CHARS = 34
BARYCENTRE_SWEEPS = 4
FONT_FAMILY = "DejaVu Sans, Verdana, sans-serif"


def band_colour(readiness: float) -> str:
    """The colour of a readiness band: the picture's boxes and the admin's table share it."""
    return BAND_COLOURS[readiness_band(readiness)]


def _tint(colour: str, strength: float = 0.4) -> str:
    """The colour mixed with white: an opaque box fill that hides the edges behind it."""
    channels = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - (255 - c) * strength):02X}" for c in channels)


@cache
def _font():
    import matplotlib
    from matplotlib import ft2font

    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    font = ft2font.FT2Font(str(path))
    font.set_size(FONT_SIZE, 72)  # 72 dpi: one point is one SVG pixel
    return font


@cache
def text_width(text: str) -> float:
    """The drawn width of `text` in FONT_SIZE DejaVu Sans, in SVG pixels."""
    font = _font()
    font.set_text(text, 0.0)
    width, _ = font.get_width_height()  # 26.6 fixed point
    return max(width / 64.0, FONT_SIZE * 0.3 * len(text)) + 1.0


def short_label(name: str) -> str:
    name = " ".join(name.split())
    return name if len(name) <= LABEL_MAX_CHARS else name[: LABEL_MAX_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def bottom(self) -> float:
        return self.y + self.height

    @property
    def middle(self) -> float:
        return self.y + self.height / 2

    def overlaps(self, other: Box) -> bool:
        return (
            self.x < other.right
            and other.x < self.right
            and self.y < other.bottom
            and other.y < self.bottom
        )


@dataclass(frozen=True)
class PictureConcept:
    """What the picture needs of a concept (read by `selectors.map_picture_data`)."""

    id: int
    name: str
    readiness: float
    centrality: float
    has_edge: bool  # any prerequisite edge in the whole map, drawn or not


@dataclass(frozen=True)
class DrawnNode:
    concept: PictureConcept
    label: str
    box: Box
    text_width: float
    apart: bool  # no edge to another drawn concept


@dataclass(frozen=True)
class DrawnEdge:
    prerequisite: int
    concept: int
    path: str
    in_cycle: bool


@dataclass(frozen=True)
class Picture:
    nodes: list[DrawnNode]
    edges: list[DrawnEdge]
    headings: list[tuple[Box, str]]
    width: float
    height: float
    concept_count: int  # in the whole map
    edge_count: int  # in the whole map
    max_centrality: float = 0.0
    apart_without_edges: int = 0
    apart_linked_elsewhere: int = 0

    @property
    def not_drawn_concepts(self) -> int:
        return max(self.concept_count - len(self.nodes), 0)

    @property
    def not_drawn_edges(self) -> int:
        return max(self.edge_count - len(self.edges), 0)

    def boxes(self) -> list[tuple[str, Box]]:
        """Every box that holds text: node labels and headings."""
        return [(n.label, n.box) for n in self.nodes] + [(t, b) for b, t in self.headings]

    def overlapping(self) -> list[tuple[str, str]]:
        """Pairs of text boxes that overlap (none, by construction)."""
        boxes = self.boxes()
        return [
            (a_text, b_text)
            for i, (a_text, a) in enumerate(boxes)
            for b_text, b in boxes[i + 1 :]
            if a.overlaps(b)
        ]

    def caption(self) -> str:
        """One line: what is drawn and how much is not."""
        n, total = len(self.nodes), self.concept_count
        edge_word = "edge" if len(self.edges) == 1 else "edges"
        if self.not_drawn_concepts == 0:
            drawn = f"All {n:,} concepts and the {len(self.edges):,} prerequisite {edge_word} between them are drawn."
        else:
            drawn = (
                f"Drawn: the {n:,} most central of {total:,} concepts and the "
                f"{len(self.edges):,} prerequisite {edge_word} between them. Not drawn: "
                f"{self.not_drawn_concepts:,} concepts and {self.not_drawn_edges:,} edges "
                "(all are in the teaching order below)."
            )
        apart = self.apart_without_edges + self.apart_linked_elsewhere
        if not apart:
            return drawn
        parts = []
        if self.apart_without_edges:
            verb = "has" if self.apart_without_edges == 1 else "have"
            parts.append(
                f"{self.apart_without_edges:,} {verb} no prerequisite edge at all "
                "(no file links them to another concept)"
            )
        if self.apart_linked_elsewhere:
            verb = "is" if self.apart_linked_elsewhere == 1 else "are"
            parts.append(
                f"{self.apart_linked_elsewhere:,} {verb} linked only to concepts not drawn"
            )
        subject = "1 drawn concept stands" if apart == 1 else f"{apart:,} drawn concepts stand"
        return f"{drawn} {subject} apart on the right: {'; '.join(parts)}."


def _components(ids: list[int], successors: dict[int, list[int]]) -> dict[int, int]:
    """Strongly connected components (Tarjan, iterative): node -> component number."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    component: dict[int, int] = {}
    counter = 0
    components = 0
    for root in ids:
        if root in index:
            continue
        work = [(root, iter(successors.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = components
                    if member == node:
                        break
                components += 1
    return component


def _layers(ids: list[int], edges: list[tuple[int, int]]) -> dict[int, int]:
    """Layer of each linked node: 0 for no drawn prerequisite, else 1 + its prerequisites'."""
    successors: dict[int, list[int]] = defaultdict(list)
    for prerequisite, concept in edges:
        successors[prerequisite].append(concept)
    component = _components(ids, successors)
    comp_succ: dict[int, set[int]] = defaultdict(set)
    indegree: dict[int, int] = {c: 0 for c in component.values()}
    for prerequisite, concept in edges:
        a, b = component[prerequisite], component[concept]
        if a != b and b not in comp_succ[a]:
            comp_succ[a].add(b)
            indegree[b] += 1
    layer = {c: 0 for c in indegree}
    ready = sorted(c for c, d in indegree.items() if d == 0)
    while ready:
        current = ready.pop()
        for nxt in comp_succ[current]:
            layer[nxt] = max(layer[nxt], layer[current] + 1)
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return {node: layer[component[node]] for node in ids}


def _order_layers(
    layers: dict[int, list[int]], edges: list[tuple[int, int]]
) -> dict[int, list[int]]:
    """Barycentre sweeps: each node moves to the mean row of its neighbours."""
    preds: dict[int, list[int]] = defaultdict(list)
    succs: dict[int, list[int]] = defaultdict(list)
    for prerequisite, concept in edges:
        preds[concept].append(prerequisite)
        succs[prerequisite].append(concept)
    order = {k: list(v) for k, v in layers.items()}
    row = {node: i for nodes in order.values() for i, node in enumerate(nodes)}
    keys = sorted(order)
    for sweep in range(BARYCENTRE_SWEEPS):
        downward = sweep % 2 == 0
        for layer in keys[1:] if downward else keys[-2::-1]:
            neighbours = preds if downward else succs

            def barycentre(node: int, neighbours=neighbours) -> float:
                rows = [row[n] for n in neighbours[node] if n in row]
                return sum(rows) / len(rows) if rows else row[node]

            order[layer].sort(key=barycentre)
            for i, node in enumerate(order[layer]):
                row[node] = i
    return order


def picture_layout(
    *,
    concepts: Sequence[PictureConcept],
    edges: Sequence[tuple[int, int]],
    concept_count: int,
    edge_count: int,
) -> Picture:
    """Place the given concepts and the edges between them. Pure: no database.

    `concepts` are the ones to draw, most central first; `edges` are
    (prerequisite id, concept id) pairs among them; the counts are the whole map's.
    """
    by_id = {c.id: c for c in concepts}
    edges = [(a, b) for a, b in dict.fromkeys(edges) if a in by_id and b in by_id and a != b]
    linked = {n for edge in edges for n in edge}
    ranked = [c.id for c in concepts]  # most central first
    linked_ids = [i for i in ranked if i in linked]
    apart_ids = [i for i in ranked if i not in linked]
    layer_of = _layers(linked_ids, edges)
    layers: dict[int, list[int]] = defaultdict(list)
    for node in linked_ids:
        layers[layer_of[node]].append(node)
    ordered = _order_layers(dict(layers), edges)

    # Columns: each layer, wrapped every MAX_ROWS; then the concepts that stand apart.
    columns: list[list[int]] = []
    for layer in sorted(ordered):
        in_layer = ordered[layer]
        columns += [in_layer[i : i + MAX_ROWS] for i in range(0, len(in_layer), MAX_ROWS)]
    apart_columns = [apart_ids[i : i + MAX_ROWS] for i in range(0, len(apart_ids), MAX_ROWS)]
    labels = {c.id: short_label(c.name) for c in concepts}
    widths = {c.id: text_width(labels[c.id]) for c in concepts}
    tallest = max((len(c) for c in columns + apart_columns), default=0)
    body_height = tallest * (BOX_HEIGHT + ROW_GAP) - ROW_GAP
    top = MARGIN + HEADING_HEIGHT + ROW_GAP
    nodes: dict[int, DrawnNode] = {}
    headings: list[tuple[Box, str]] = []
    x: float = MARGIN
    column_of: dict[int, int] = {}
    column_right: list[float] = []

    def place(column: list[int], apart: bool) -> None:
        nonlocal x
        width = max(widths[n] for n in column) + 2 * PAD_X
        column_height = len(column) * (BOX_HEIGHT + ROW_GAP) - ROW_GAP
        y: float = top + (body_height - column_height) / 2 if not apart else top
        for node in column:
            box = Box(x, y, widths[node] + 2 * PAD_X, BOX_HEIGHT)
            nodes[node] = DrawnNode(by_id[node], labels[node], box, widths[node], apart)
            column_of[node] = len(column_right)
            y += BOX_HEIGHT + ROW_GAP
        column_right.append(x + width)
        x += width + COLUMN_GAP

    direction = "Prerequisites → what builds on them"
    for column in columns:
        place(column, apart=False)
    if columns:
        headings.append((Box(MARGIN, MARGIN, text_width(direction), HEADING_HEIGHT), direction))
    if apart_columns:
        heading = "Not linked to a drawn concept:"
        if columns:
            x = max(x, MARGIN + text_width(direction) + COLUMN_GAP / 2)
        heading_box = Box(x, MARGIN, text_width(heading), HEADING_HEIGHT)
        headings.append((heading_box, heading))
        start = x
        for column in apart_columns:
            place(column, apart=True)
        x = max(x, start + heading_box.width + COLUMN_GAP)
    width = max(
        x - COLUMN_GAP + MARGIN + LOOP_OUTSET,
        max((b.right for b, _ in headings), default=0) + MARGIN,
    )
    height = top + body_height + MARGIN

    cycle_edges = {(a, b) for a, b in edges if layer_of.get(a) == layer_of.get(b)}
    drawn_edges: list[DrawnEdge] = []
    for prerequisite, concept in edges:
        source, target = nodes[prerequisite].box, nodes[concept].box
        if column_of[concept] > column_of[prerequisite]:
            sx, tx = source.right, target.x
            bend = max((tx - sx) / 2, 12.0)
            path = (
                f"M{sx:.1f},{source.middle:.1f} C{sx + bend:.1f},{source.middle:.1f} "
                f"{tx - bend:.1f},{target.middle:.1f} {tx:.1f},{target.middle:.1f}"
            )
        else:
            # Both in one layer (a cycle): an arc out of the right side of the column(s).
            out = max(column_right[column_of[concept]], column_right[column_of[prerequisite]])
            out += LOOP_OUTSET
            path = (
                f"M{source.right:.1f},{source.middle:.1f} C{out:.1f},{source.middle:.1f} "
                f"{out:.1f},{target.middle:.1f} {target.right:.1f},{target.middle:.1f}"
            )
        drawn_edges.append(
            DrawnEdge(prerequisite, concept, path, (prerequisite, concept) in cycle_edges)
        )
    apart_without = sum(1 for i in apart_ids if not by_id[i].has_edge)
    return Picture(
        nodes=[nodes[i] for column in columns + apart_columns for i in column],
        edges=drawn_edges,
        headings=headings,
        width=round(width, 1),
        height=round(height, 1),
        concept_count=concept_count,
        edge_count=edge_count,
        max_centrality=max((c.centrality for c in concepts), default=0.0),
        apart_without_edges=apart_without,
        apart_linked_elsewhere=len(apart_ids) - apart_without,
    )


def picture_svg(picture: Picture, url_for: Callable[[int], str]) -> str:
    """The picture as an SVG element for an HTML page; every name is escaped."""
    if not picture.nodes:
        return ""
    names = {n.concept.id: n.concept.name for n in picture.nodes}
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="tb-map" width="{picture.width}" '
        f'height="{picture.height}" viewBox="0 0 {picture.width} {picture.height}" '
        f'font-family="{FONT_FAMILY}" font-size="{FONT_SIZE}" role="img" '
        f'aria-label="{escape(picture.caption())}">',
        "<defs>"
        '<marker id="tb-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
        '<marker id="tb-arrow-cycle" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#B2182B"/></marker>'
        "</defs>",
        '<g class="tb-edges" fill="none">',
    ]
    for edge in picture.edges:
        colour, marker, dash = (
            ("#B2182B", "tb-arrow-cycle", ' stroke-dasharray="4 3"')
            if edge.in_cycle
            else ("#777", "tb-arrow", "")
        )
        title = f"{names[edge.concept]} builds on {names[edge.prerequisite]}"
        out.append(
            f'<path d="{edge.path}" stroke="{colour}" stroke-width="1.1"{dash} '
            f'marker-end="url(#{marker})"><title>{escape(title)}</title></path>'
        )
    out.append("</g>")
    for box, text in picture.headings:
        out.append(
            f'<text x="{box.x:.1f}" y="{box.y + box.height - 5:.1f}" fill="#444" '
            f'font-weight="normal">{escape(text)}</text>'
        )
    out.append('<g class="tb-nodes">')
    top = picture.max_centrality or 1.0
    for node in picture.nodes:
        concept, box = node.concept, node.box
        stroke = 0.8 + 2.2 * (concept.centrality / top)
        title = (
            f"{concept.name} — readiness {concept.readiness:.2f}, "
            f"centrality {concept.centrality:.3f}"
        )
        out.append(
            f'<a href="{escape(url_for(concept.id))}"><title>{escape(title)}</title>'
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" '
            f'height="{box.height:.1f}" rx="4" fill="{_tint(band_colour(concept.readiness))}" '
            f'stroke="#333" stroke-width="{stroke:.2f}"/>'
            f'<text x="{box.x + PAD_X:.1f}" y="{box.middle + FONT_SIZE * 0.36:.1f}" '
            f'fill="#111" textLength="{node.text_width - 1:.1f}" '
            f'lengthAdjust="spacingAndGlyphs">{escape(node.label)}</text></a>'
        )
    out.append("</g></svg>")
    return "".join(out)
