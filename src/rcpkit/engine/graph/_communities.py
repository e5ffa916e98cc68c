"""Hierarchical communities: a size-bounded finest level, then coarsening levels above it.

Level 0 partitions the entity graph at `resolution`, then splits every
community larger than `max_size` by partitioning its own induced subgraph
(again, up to a few rounds) — the finest, most specific level, as GraphRAG's
hierarchical Leiden bounds its cluster size. Each level above partitions the
graph of the level below's communities (edge weight = total weight between
them, internal weight kept as a self-loop) at the next `coarsening`
resolution; one that merges nothing adds no level. Levels nest by construction.

Strategies (`COMMUNITY_METHODS`): ``"leiden"`` (igraph's C implementation of
Leiden, Traag et al. 2019, modularity objective with a resolution) and
``"louvain"`` (networkx, Blondel et al. 2008). Both are seeded and nodes are
ordered by entity key, so the same graph always gives the same communities.
"""

from __future__ import annotations

import importlib.util
import random
import threading
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["COMMUNITY_METHODS", "canonical", "community_method", "hierarchy"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# (nodes, src, dst, weight, resolution, seed) -> community index per node
Partition = Callable[[int, IntArray, IntArray, FloatArray, float, int], IntArray]

_SPLIT_ROUNDS: Final = 4
# igraph draws from one process-wide generator: seed it, run, restore, one caller at a time.
_IGRAPH_RNG_LOCK: Final = threading.Lock()


def leiden_partition(
    n: int, src: IntArray, dst: IntArray, weight: FloatArray, resolution: float, seed: int
) -> IntArray:
    """Leiden (igraph `community_leiden`, modularity objective), two iterations, seeded."""
    import igraph

    graph = igraph.Graph(n=n, edges=list(zip(src.tolist(), dst.tolist(), strict=True)))
    graph.es["weight"] = weight.tolist()
    with _IGRAPH_RNG_LOCK:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            found = graph.community_leiden(
                objective_function="modularity",
                weights="weight",
                resolution=resolution,
                n_iterations=2,
            )
        finally:
            igraph.set_random_number_generator(random)
    return np.asarray(found.membership, dtype=np.int64)


def louvain_partition(
    n: int, src: IntArray, dst: IntArray, weight: FloatArray, resolution: float, seed: int
) -> IntArray:
    """Louvain (Blondel et al. 2008) from networkx, seeded."""
    import networkx

    graph = networkx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), weight.tolist(), strict=True))
    groups = networkx.community.louvain_communities(
        graph, weight="weight", resolution=resolution, seed=seed
    )
    membership = np.zeros(n, dtype=np.int64)
    for index, group in enumerate(groups):
        membership[sorted(group)] = index
    return membership


#: Community detection strategies by name; "auto" resolves to the first installed.
COMMUNITY_METHODS: Final[dict[str, Partition]] = {
    "leiden": leiden_partition,
    "louvain": louvain_partition,
}
_REQUIRES: Final = {"leiden": ("igraph",), "louvain": ("networkx",)}


def community_method(name: str) -> tuple[str, Partition]:
    """Resolve a method name ("auto": Leiden if igraph is installed, else Louvain)."""
    names = ("leiden", "louvain") if name == "auto" else (name,)
    for candidate in names:
        if candidate not in COMMUNITY_METHODS:
            raise ValueError(f"unknown community method {name!r}; known: auto, leiden, louvain")
        if all(importlib.util.find_spec(module) for module in _REQUIRES[candidate]):
            return candidate, COMMUNITY_METHODS[candidate]
    raise ValueError(f"community method {name!r} needs {', '.join(_REQUIRES[names[-1]])}")


def canonical(membership: IntArray) -> IntArray:
    """Relabel communities 0… by size (largest first), ties by their smallest member."""
    if not len(membership):
        return membership
    labels, _first, inverse, sizes = np.unique(
        membership, return_index=True, return_inverse=True, return_counts=True
    )
    smallest = np.full(len(labels), len(membership), dtype=np.int64)
    np.minimum.at(smallest, inverse.reshape(-1), np.arange(len(membership)))
    order = np.lexsort((smallest, -sizes))
    rank = np.empty(len(labels), dtype=np.int64)
    rank[order] = np.arange(len(labels))
    result: IntArray = rank[inverse.reshape(-1)]
    return result


def _aggregate(
    membership: IntArray, src: IntArray, dst: IntArray, weight: FloatArray
) -> tuple[IntArray, IntArray, FloatArray]:
    a, b = membership[src], membership[dst]
    low, high = np.minimum(a, b), np.maximum(a, b)
    size = int(membership.max()) + 1 if len(membership) else 1
    pairs, inverse = np.unique(low * size + high, return_inverse=True)
    total = np.bincount(inverse.reshape(-1), weight, minlength=len(pairs)).astype(np.float64)
    codes = pairs.astype(np.int64)
    return codes // size, codes % size, total


def split_large(
    membership: IntArray,
    graph: tuple[IntArray, IntArray, FloatArray],
    resolution: float,
    max_size: int,
    seed: int,
    partition: Partition,
) -> IntArray:
    """Split communities over `max_size` members by partitioning their induced subgraphs."""
    src, dst, weight = graph
    result = membership.copy()
    whole: set[int] = set()  # communities a partition would not split
    for _ in range(_SPLIT_ROUNDS):
        sizes = np.bincount(result)
        large = [int(c) for c in np.nonzero(sizes > max_size)[0] if int(c) not in whole]
        if not large:
            break
        for community in large:
            members = np.nonzero(result == community)[0]
            local = np.full(len(result), -1, dtype=np.int64)
            local[members] = np.arange(len(members))
            inside = (result[src] == community) & (result[dst] == community)
            parts = partition(
                len(members),
                local[src[inside]],
                local[dst[inside]],
                weight[inside],
                resolution,
                seed,
            )
            if parts.max(initial=0) == 0:
                whole.add(community)
                continue
            fresh = int(result.max()) + 1
            result[members] = np.where(parts == 0, community, fresh + parts - 1)
    return canonical(result)


def hierarchy(
    n: int,
    graph: tuple[IntArray, IntArray, FloatArray],
    resolution: float,
    coarsening: Sequence[float],
    max_size: int,
    seed: int,
    partition: Partition,
) -> list[IntArray]:
    """Community index per entity node at each level, level 0 the finest."""
    if n == 0:
        return []
    src, dst, weight = graph
    finest = canonical(partition(n, src, dst, weight, resolution, seed))
    levels = [split_large(finest, graph, resolution, max_size, seed, partition)]
    for step in coarsening:
        below = levels[-1]
        count = int(below.max()) + 1
        if count <= 1:
            break
        super_src, super_dst, super_weight = _aggregate(below, src, dst, weight)
        groups = canonical(partition(count, super_src, super_dst, super_weight, step, seed))
        membership = canonical(groups[below])
        if int(membership.max()) + 1 < count:  # a level that merges nothing is no level
            levels.append(membership)
    return levels
