"""A picture of a subject's map, rendered on the server as inline SVG (matplotlib).

Columns are teaching generations (prerequisites on the left), arrows go from a
prerequisite to what builds on it, a node's size grows with its centrality (hubs are
larger) and its colour is its readiness band. No network access: the SVG is generated
here and embedded in the admin page as markup.
"""

from __future__ import annotations

import io
from collections import defaultdict

from concepts.models import (
    READINESS_CONFIRMED,
    READINESS_EXPLAINED,
    READINESS_NAMED,
    READINESS_TAUGHT,
    Concept,
    Prerequisite,
)
from memory.models import Subject

# Band colours, colour-blind safe (Okabe-Ito).
BAND_COLOURS = {
    READINESS_NAMED: "#E69F00",  # only named
    READINESS_EXPLAINED: "#56B4E9",  # explained by a file
    READINESS_CONFIRMED: "#009E73",  # confirmed by a check
    READINESS_TAUGHT: "#CC79A7",  # taught by a person
}
BAND_LABELS = {
    READINESS_NAMED: "only named (0.35)",
    READINESS_EXPLAINED: "explained by a file (0.60)",
    READINESS_CONFIRMED: "confirmed by a check (0.85)",
    READINESS_TAUGHT: "taught by a person (1.0)",
}
NODE_MIN_SIZE = 250.0
NODE_SIZE_PER_CENTRALITY = 6000.0
MAX_NODES_DRAWN = 120


def _band_colour(readiness: float) -> str:
    band = min(BAND_COLOURS, key=lambda b: abs(b - readiness))
    return BAND_COLOURS[band]


def map_svg(*, subject: Subject) -> str:
    """The subject's map as an SVG document (a string), or "" when the map is empty."""
    import matplotlib.pyplot as plt

    figure = map_figure(subject=subject)
    if figure is None:
        return ""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    svg = buffer.getvalue()
    # Drop the XML prolog and DOCTYPE: the SVG is embedded in an HTML page.
    return svg[svg.index("<svg") :]


def map_figure(*, subject: Subject):
    """The matplotlib figure of the map (None when the map is empty)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    concepts = list(
        Concept.objects.filter(subject=subject).order_by("teaching_rank", "name")[:MAX_NODES_DRAWN]
    )
    if not concepts:
        return None
    ids = {c.pk for c in concepts}
    edges = [
        (a, b)
        for a, b in Prerequisite.objects.filter(subject=subject).values_list(
            "concept_id", "prerequisite_id"
        )
        if a in ids and b in ids
    ]
    columns: dict[int, list[Concept]] = defaultdict(list)
    for concept in concepts:
        columns[concept.generation].append(concept)
    position: dict[int, tuple[float, float]] = {}
    tallest = max(len(column) for column in columns.values())
    for generation, column in sorted(columns.items()):
        for row, concept in enumerate(column):
            # Centre each column vertically; hubs (first in teaching order) on top.
            position[concept.pk] = (
                generation * 3.0,
                (tallest - 1) / 2 - row + (len(column) - 1) / 2 - (tallest - 1) / 2,
            )
    width = max(6.0, 2.6 * (len(columns) + 1))
    height = max(4.0, 0.75 * tallest + 1.5)
    figure, axes = plt.subplots(figsize=(width, height))
    for concept_id, prerequisite_id in edges:
        (x1, y1), (x0, y0) = position[concept_id], position[prerequisite_id]
        axes.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            arrowprops={
                "arrowstyle": "-|>",
                "color": "#777777",
                "lw": 0.8,
                "shrinkA": 12,
                "shrinkB": 12,
                "connectionstyle": "arc3,rad=0.08",
            },
            zorder=1,
        )
    xs = [position[c.pk][0] for c in concepts]
    ys = [position[c.pk][1] for c in concepts]
    sizes = [NODE_MIN_SIZE + NODE_SIZE_PER_CENTRALITY * c.centrality for c in concepts]
    colours = [_band_colour(c.readiness) for c in concepts]
    axes.scatter(xs, ys, s=sizes, c=colours, edgecolors="#333333", linewidths=0.6, zorder=2)
    for concept, x, y in zip(concepts, xs, ys, strict=True):
        axes.annotate(
            concept.name, (x, y), xytext=(0, -14), textcoords="offset points",
            ha="center", va="top", fontsize=8, zorder=3,
        )  # fmt: skip
    legend = [
        Line2D([0], [0], marker="o", color="w", markerfacecolor=colour, markersize=9, label=label)
        for band, colour in BAND_COLOURS.items()
        for label in [BAND_LABELS[band]]
    ]
    axes.legend(handles=legend, loc="upper right", fontsize=7, frameon=False)
    axes.set_title("Prerequisites point to what builds on them; larger = more central", fontsize=9)
    axes.margins(x=0.15, y=0.2)
    axes.axis("off")
    return figure
