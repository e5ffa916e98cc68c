"""Bounded graph walks over arrays: hop-limited neighbourhoods, personalised PageRank, paths.

All three are pure functions; the work of each is bounded by the hop limit,
the per-node edge cap and the neighbourhood size cap (§15.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._snapshot import Snapshot

__all__ = [
    "LocalGraph",
    "best_paths",
    "local_graph",
    "neighbourhood",
    "path_to",
    "personalized_pagerank",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def neighbourhood(
    snapshot: Snapshot, seeds: IntArray, hops: int, cap: int, max_nodes: int
) -> tuple[IntArray, IntArray]:
    """Nodes within `hops` of `seeds` following each node's `cap` strongest edges.

    Returns the nodes (seeds first, then by hop, stronger edges first) and the
    hop distance of each; at most `max_nodes` nodes.
    """
    seeds = np.unique(seeds)[:max_nodes]
    visited = np.full(snapshot.n_nodes, -1, dtype=np.int64)
    visited[seeds] = 0
    order = [seeds]
    frontier, total = seeds, len(seeds)
    adjacency = snapshot.adjacency
    for hop in range(1, hops + 1):
        if not len(frontier) or total >= max_nodes:
            break
        _, index = adjacency.gather(frontier, cap)
        found, weights = adjacency.columns[index], adjacency.values[index]
        ranked = np.lexsort((found, -weights))
        found = found[ranked]
        found = found[visited[found] < 0]
        _, first = np.unique(found, return_index=True)
        fresh = found[np.sort(first)][: max_nodes - total]
        visited[fresh] = hop
        order.append(fresh)
        frontier, total = fresh, total + len(fresh)
    nodes = np.concatenate(order)
    return nodes, visited[nodes]


@dataclass(frozen=True, slots=True)
class LocalGraph:
    """The subgraph induced on `nodes`; edges in local indices, both directions."""

    nodes: IntArray  # global node index per local index
    src: IntArray
    dst: IntArray
    weight: FloatArray


def local_graph(snapshot: Snapshot, nodes: IntArray) -> LocalGraph:
    """Every edge of the snapshot between two of `nodes`."""
    local = np.full(snapshot.n_nodes, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    mask = (local[snapshot.edge_src] >= 0) & (local[snapshot.edge_dst] >= 0)
    a, b = local[snapshot.edge_src[mask]], local[snapshot.edge_dst[mask]]
    w = snapshot.edge_weight[mask]
    return LocalGraph(nodes, np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([w, w]))


def personalized_pagerank(
    graph: LocalGraph,
    personalization: FloatArray,
    damping: float = 0.85,
    max_iterations: int = 50,
    tolerance: float = 1e-8,
) -> FloatArray:
    """Stationary scores of a walk that restarts to `personalization` with prob. 1 - damping.

    Power iteration on the weighted, undirected local graph; the mass of
    dangling nodes restarts too. Scores sum to 1.
    """
    n = len(graph.nodes)
    restart = personalization / personalization.sum()
    degree = np.bincount(graph.src, graph.weight, minlength=n)
    share = graph.weight / np.where(degree > 0, degree, 1.0)[graph.src]
    dangling = degree <= 0
    scores = restart.copy()
    for _ in range(max_iterations):
        flow = np.bincount(graph.dst, scores[graph.src] * share, minlength=n)
        updated = damping * (flow + scores[dangling].sum() * restart) + (1 - damping) * restart
        if np.abs(updated - scores).sum() < tolerance:
            scores = updated
            break
        scores = updated
    result: FloatArray = scores / scores.sum()
    return result


def best_paths(graph: LocalGraph, sources: IntArray, hops: int) -> tuple[FloatArray, IntArray]:
    """Most probable walks of at most `hops` steps from any source (local indices).

    The cost of a step u→v is `-log(w_uv / degree_u)`, the walk's own transition
    probability, so the best path is the one a random walker most likely takes.
    Returns `(cost, parents)`: cost per node, and `parents[h, v]` = the node before
    `v` on its best ≤h-step path, or -1 when that path has fewer than h steps.
    """
    n = len(graph.nodes)
    degree = np.bincount(graph.src, graph.weight, minlength=n)
    step = -np.log(graph.weight / np.where(degree > 0, degree, 1.0)[graph.src])
    cost = np.full(n, np.inf)
    cost[sources] = 0.0
    parents = np.full((hops + 1, n), -1, dtype=np.int64)
    for hop in range(1, hops + 1):
        active = np.flatnonzero(np.isfinite(cost[graph.src]))  # steps out of reached nodes
        src, dst = graph.src[active], graph.dst[active]
        candidate = cost[src] + step[active]
        order = np.lexsort((src, candidate, dst))
        targets, first = np.unique(dst[order], return_index=True)
        best, via = candidate[order][first], src[order][first]
        better = best < cost[targets] - 1e-12
        updated = cost.copy()
        updated[targets[better]] = best[better]
        parents[hop, targets[better]] = via[better]
        cost = updated
    return cost, parents


def path_to(parents: IntArray, node: int) -> list[int]:
    """The best path ending at `node` (local indices), source first."""
    path = [node]
    for hop in range(parents.shape[0] - 1, 0, -1):
        before = int(parents[hop, path[-1]])
        if before >= 0:
            path.append(before)
    return path[::-1]
