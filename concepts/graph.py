"""Derived numbers of a subject's map (R-2.5), computed with networkx.

Pure functions over plain data, so they are testable without a database and the
service that writes them back stays short.

- Centrality: weighted PageRank over edges *concept -> prerequisite*. Rank flows from
  what builds on something to what it builds on, so the prerequisite everything builds
  on collects the most: the hub.
- Teaching order: topological generations of *prerequisite -> concept* (prerequisites
  first); inside a generation, hubs first. A cycle is collapsed to one strongly
  connected component so the order still exists; its members are reported.
- Subject readiness: centrality-weighted mean of concept readiness, so an unexplained
  hub costs more than an unexplained leaf.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

# PageRank damping: the usual 0.85 (probability of following an edge vs jumping).
PAGERANK_ALPHA = 0.85
PAGERANK_MAX_ITER = 200
PAGERANK_TOL = 1.0e-8


@dataclass(frozen=True)
class Derived:
    centrality: dict[int, float]
    generation: dict[int, int]
    teaching_rank: dict[int, int]
    readiness: float
    cycle: list[int]


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

    # Prerequisite -> concept: a topological order puts prerequisites first.
    forward = graph.reverse(copy=False)  # a view: copying the attributes cost most of it
    condensed = nx.condensation(forward)
    cycle_nodes = sorted(
        (
            n
            for comp in condensed.nodes
            if len(condensed.nodes[comp]["members"]) > 1
            for n in condensed.nodes[comp]["members"]
        ),
        key=lambda n: names[n],
    )
    generation: dict[int, int] = {}
    for index, layer in enumerate(nx.topological_generations(condensed)):
        for component in layer:
            for node in condensed.nodes[component]["members"]:
                generation[node] = index
    ordered = sorted(graph.nodes, key=lambda n: (generation[n], -centrality[n], names[n]))
    teaching_rank = {node: rank for rank, node in enumerate(ordered, start=1)}
    return Derived(centrality, generation, teaching_rank, weighted, cycle_nodes)
