"""Derived numbers of a subject's map (R-2.5), computed with networkx.

Pure functions over plain data, so they are testable without a database and the
service that writes them back stays short.

- Centrality: weighted PageRank over edges *concept -> prerequisite*. Rank flows from
  what builds on something to what it builds on, so the prerequisite everything builds
  on collects the most: the hub.
- Teaching order: topological generations of *prerequisite -> concept* (prerequisites
  first); inside a generation, hubs first. A cycle is collapsed to one strongly
  connected component so the order still exists; its members are reported.
- Big cycles: a prerequisite cycle of more than CYCLE_KEEP_MAX concepts is not a
  teaching fact but an artefact of mentions ("A is used in B's definition and B in A's"
  across a whole chapter). For the teaching order it is broken by removing, one at a time,
  the weakest edge (lowest weight, i.e. the fewest definitions that gave it; ties: the
  latest-created pair of ids) of a cycle inside it, until no strongly connected component
  is bigger than CYCLE_KEEP_MAX. The edges stay in the map; every cycle found is reported,
  its members in `cycle` and its size in `cycle_sizes`.
- Subject readiness: centrality-weighted mean of concept readiness, so an unexplained
  hub costs more than an unexplained leaf.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx

# PageRank damping: the usual 0.85 (probability of following an edge vs jumping).
PAGERANK_ALPHA = 0.85
PAGERANK_MAX_ITER = 200
PAGERANK_TOL = 1.0e-8
# Cycles up to this size are kept and reported ("A and B explain each other"); bigger ones
# are broken for the teaching order (see the module docstring).
CYCLE_KEEP_MAX = 3


@dataclass(frozen=True)
class Derived:
    centrality: dict[int, float]
    generation: dict[int, int]
    teaching_rank: dict[int, int]
    readiness: float
    cycle: list[int]
    # Sizes of the prerequisite cycles found, biggest first, before big ones were broken.
    cycle_sizes: list[int] = field(default_factory=list)
    # Edges (concept, prerequisite) left out of the teaching order to break big cycles.
    broken_edges: list[tuple[int, int]] = field(default_factory=list)


def derive(
    *,
    nodes: Iterable[tuple[int, str, float]],
    edges: Iterable[tuple[int, int, float]],
) -> Derived:
    """`nodes` are (id, name, readiness); `edges` (concept, prerequisite, weight)."""
    graph = nx.DiGraph()
    names: dict[int, str] = {}
    readiness: dict[int, float] = {}
    for node_id, name, ready in nodes:
        graph.add_node(node_id)
        names[node_id] = name
        readiness[node_id] = ready
    for concept, prerequisite, weight in edges:
        if concept in names and prerequisite in names and concept != prerequisite:
            graph.add_edge(concept, prerequisite, weight=max(float(weight), 0.0))
    if graph.number_of_nodes() == 0:
        return Derived({}, {}, {}, 0.0, [])

    centrality = nx.pagerank(
        graph, alpha=PAGERANK_ALPHA, weight="weight", max_iter=PAGERANK_MAX_ITER, tol=PAGERANK_TOL
    )
    total = sum(centrality.values()) or 1.0
    weighted = sum(centrality[n] * readiness[n] for n in graph.nodes) / total

    # Every cycle is reported (its members, its size); a big one is broken for the order.
    cycles = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    cycle_sizes = sorted((len(c) for c in cycles), reverse=True)
    cycle_nodes = sorted((n for c in cycles for n in c), key=lambda n: names[n])
    ordering, broken = graph, []
    if cycle_sizes and cycle_sizes[0] > CYCLE_KEEP_MAX:
        ordering = graph.copy()  # only then: the copy costs
        broken = _break_big_cycles(ordering)
    # Prerequisite -> concept: a topological order puts prerequisites first.
    forward = ordering.reverse(copy=False)  # a view: copying the attributes cost most of it
    condensed = nx.condensation(forward)
    generation: dict[int, int] = {}
    for index, layer in enumerate(nx.topological_generations(condensed)):
        for component in layer:
            for node in condensed.nodes[component]["members"]:
                generation[node] = index
    ordered = sorted(graph.nodes, key=lambda n: (generation[n], -centrality[n], names[n]))
    teaching_rank = {node: rank for rank, node in enumerate(ordered, start=1)}
    return Derived(
        centrality, generation, teaching_rank, weighted, cycle_nodes, cycle_sizes, broken
    )


def _break_big_cycles(graph: nx.DiGraph) -> list[tuple[int, int]]:
    """Remove the weakest edge of a cycle inside each component bigger than CYCLE_KEEP_MAX
    until none is; the removed edges, in order."""
    removed: list[tuple[int, int]] = []
    while True:
        big = [c for c in nx.strongly_connected_components(graph) if len(c) > CYCLE_KEEP_MAX]
        if not big:
            return removed
        for component in big:
            cycle = nx.find_cycle(graph.subgraph(component))
            weakest = min(
                ((u, v) for u, v, *_ in cycle),
                key=lambda e: (graph.edges[e]["weight"], -max(e), -min(e)),
            )
            graph.remove_edge(*weakest)
            removed.append(weakest)
