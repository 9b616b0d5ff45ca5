"""Derived numbers of a subject's map (R-2.5), computed on scipy's sparse matrices (the
numbers networkx's pagerank and condensation give; networkx breaks big cycles).

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
import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

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
    """`nodes` are (id, name, readiness); `edges` (concept, prerequisite, weight).

    On arrays (scipy's sparse matrices and strong components), not a networkx graph:
    building one and its condensation cost most of a recomputation at a thousand
    concepts, and every file read recomputes. networkx breaks big cycles (rare)."""
    ids: list[int] = []
    names: dict[int, str] = {}
    readiness: dict[int, float] = {}
    for node_id, name, ready in nodes:
        if node_id not in names:
            ids.append(node_id)
        names[node_id] = name
        readiness[node_id] = ready
    if not ids:
        return Derived({}, {}, {}, 0.0, [])
    index = {node_id: i for i, node_id in enumerate(ids)}
    weights: dict[tuple[int, int], float] = {}
    for concept, prerequisite, weight in edges:
        if concept in index and prerequisite in index and concept != prerequisite:
            weights[(index[concept], index[prerequisite])] = max(float(weight), 0.0)
    count = len(ids)
    pairs = np.array(list(weights), dtype=np.int64).reshape(-1, 2)
    matrix = sparse.csr_array(
        (
            np.fromiter(weights.values(), dtype=float, count=len(weights)),
            (pairs[:, 0], pairs[:, 1]),
        ),
        shape=(count, count),
    )
    rank = _pagerank(matrix)
    centrality = dict(zip(ids, rank.tolist(), strict=True))
    total = sum(centrality.values()) or 1.0
    weighted = sum(centrality[n] * readiness[n] for n in ids) / total

    # Every cycle is reported (its members, its size); a big one is broken for the order.
    components, labels = csgraph.connected_components(matrix, directed=True, connection="strong")
    sizes = np.bincount(labels, minlength=components)
    cycle_sizes = sorted((int(size) for size in sizes if size > 1), reverse=True)
    cycle_nodes = sorted(
        (ids[i] for i in np.flatnonzero(sizes[labels] > 1)), key=lambda n: names[n]
    )
    broken: list[tuple[int, int]] = []
    if cycle_sizes and cycle_sizes[0] > CYCLE_KEEP_MAX:
        ordering = nx.DiGraph()
        ordering.add_nodes_from(ids)
        ordering.add_weighted_edges_from((ids[u], ids[v], w) for (u, v), w in weights.items())
        broken = _break_big_cycles(ordering)
        pairs = np.array([(index[u], index[v]) for u, v in ordering.edges], dtype=np.int64).reshape(
            -1, 2
        )
        ones = np.ones(len(pairs))
        kept = sparse.csr_array((ones, (pairs[:, 0], pairs[:, 1])), shape=(count, count))
        components, labels = csgraph.connected_components(kept, directed=True, connection="strong")
    layer = _generations(components, labels, pairs)
    generation = {node_id: int(layer[labels[i]]) for i, node_id in enumerate(ids)}
    ordered = sorted(ids, key=lambda n: (generation[n], -centrality[n], names[n]))
    teaching_rank = {node: rank for rank, node in enumerate(ordered, start=1)}
    return Derived(
        centrality, generation, teaching_rank, weighted, cycle_nodes, cycle_sizes, broken
    )


def _pagerank(matrix: sparse.csr_array) -> np.ndarray:
    """Weighted PageRank by power iteration, as networkx.pagerank computes it (uniform
    teleport, a dangling node's rank spread uniformly, L1 stop at n · PAGERANK_TOL)."""
    count = matrix.shape[0]
    out = np.asarray(matrix.sum(axis=1)).ravel()
    scale = np.zeros(count)
    scale[out != 0] = 1.0 / out[out != 0]
    transition = sparse.dia_array((scale[np.newaxis, :], 0), shape=matrix.shape).tocsr() @ matrix
    # rank @ transition, with the transpose made once instead of at every step.
    backwards = transition.T.tocsr()
    dangling = np.flatnonzero(out == 0)
    uniform = np.repeat(1.0 / count, count)
    rank = uniform
    for _ in range(PAGERANK_MAX_ITER):
        last = rank
        rank = (
            PAGERANK_ALPHA * (backwards @ rank + rank[dangling].sum() * uniform)
            + (1 - PAGERANK_ALPHA) * uniform
        )
        if np.absolute(rank - last).sum() < count * PAGERANK_TOL:
            return rank
    raise nx.PowerIterationFailedConvergence(PAGERANK_MAX_ITER)


def _generations(components: int, labels: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Each strong component's topological generation, prerequisites first: 0 for a
    component that builds on nothing, else one more than the latest it builds on."""
    source, target = labels[pairs[:, 1]], labels[pairs[:, 0]]  # prerequisite -> concept
    across = source != target
    source, target = source[across], target[across]
    waiting = np.bincount(target, minlength=components)
    order = np.argsort(source, kind="stable")
    source, target = source[order], target[order]
    starts = np.searchsorted(source, np.arange(components + 1))
    layer = np.zeros(components, dtype=np.int64)
    current = list(np.flatnonzero(waiting == 0))
    depth = 0
    while current:
        following = []
        for component in current:
            layer[component] = depth
            for after in target[starts[component] : starts[component + 1]]:
                waiting[after] -= 1
                if waiting[after] == 0:
                    following.append(after)
        current, depth = following, depth + 1
    return layer


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
