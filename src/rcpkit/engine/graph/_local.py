"""Local search: seeds → hop-bounded neighbourhood → personalised PageRank → results by unit.

The walk runs on the subgraph induced on the neighbourhood, so `hops` bounds
both how far evidence can come from and how much work one query does (§15.5).
Each unit is a strategy in `UNIT_BUILDERS`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._results import EdgeRef, GraphHit, Lineage, LocalResult, Seed, Unit
from rcpkit.engine.graph._seeds import specificity
from rcpkit.engine.graph._snapshot import Snapshot
from rcpkit.engine.graph._walk import (
    LocalGraph,
    best_paths,
    local_graph,
    neighbourhood,
    path_to,
    personalized_pagerank,
)

__all__ = ["UNIT_BUILDERS", "Walk", "local_search", "walk_from"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

_BACKING_CHUNKS: Final = 3  # chunk keys kept per node/edge result
_CHUNK_NODES: Final = 8  # provenance nodes kept per chunk result
RELATION: Final = "co-occurs"


@dataclass(frozen=True, slots=True)
class Walk:
    """A finished walk: the local graph, PPR and best paths, in local indices."""

    snapshot: Snapshot
    graph: LocalGraph
    scores: FloatArray  # PPR mass, times specificity when configured; sums to 1
    hops: IntArray
    cost: FloatArray
    parents: IntArray
    seeds: tuple[Seed, ...]

    def key(self, local: int) -> str:
        return self.snapshot.keys[int(self.graph.nodes[local])]

    def name(self, local: int) -> str:
        return self.snapshot.names[int(self.graph.nodes[local])]

    def ranked(self) -> IntArray:
        """Local nodes by score, highest first (ties: smaller key first)."""
        return np.lexsort((self.graph.nodes, -self.scores))

    def lineage(self, local: int) -> Lineage:
        path = path_to(self.parents, local) if math.isfinite(self.cost[local]) else [local]
        keys = tuple(self.key(node) for node in path)
        return Lineage(nodes=keys, edges=self.edges_along(path), path=keys)

    def edges_along(self, path: Sequence[int]) -> tuple[EdgeRef, ...]:
        nodes = self.graph.nodes
        return tuple(
            EdgeRef(
                self.key(a),
                self.key(b),
                self.snapshot.edge_weight_between(int(nodes[a]), int(nodes[b])),
            )
            for a, b in itertools.pairwise(path)
        )

    def induced_edges(self, chosen: IntArray, limit: int | None = None) -> tuple[EdgeRef, ...]:
        """Edges between chosen local nodes, strongest first, at most `limit`."""
        inside = np.zeros(len(self.graph.nodes), dtype=bool)
        inside[chosen] = True
        half = len(self.graph.src) // 2  # the first half holds each undirected edge once
        src, dst, weight = self.graph.src[:half], self.graph.dst[:half], self.graph.weight[:half]
        found = np.nonzero(inside[src] & inside[dst])[0]
        found = found[np.lexsort((found, -weight[found]))][:limit]
        return tuple(
            EdgeRef(self.key(int(src[e])), self.key(int(dst[e])), float(weight[e])) for e in found
        )

    def chunk_scores(self) -> tuple[IntArray, FloatArray]:
        """Chunk positions reached, and the PPR mass of the entities each mentions."""
        rows, index = self.snapshot.entity_chunks.gather(self.graph.nodes)
        positions = self.snapshot.entity_chunks.columns[index]
        reached, inverse = np.unique(positions, return_inverse=True)
        mass = np.bincount(inverse, self.scores[rows], minlength=len(reached)).astype(np.float64)
        return reached, mass

    def co_mentions(self, a: int, b: int) -> tuple[int, ...]:
        """Chunk keys mentioning both local nodes, at most a few."""
        nodes = self.graph.nodes
        both = np.intersect1d(
            self.snapshot.chunks_of(int(nodes[a])), self.snapshot.chunks_of(int(nodes[b]))
        )
        return tuple(int(key) for key in both[:_BACKING_CHUNKS])


def walk_from(
    snapshot: Snapshot, seeds: Sequence[tuple[int, Seed]], hops: int, config: GraphConfig
) -> Walk | None:
    """Expand `seeds` by `hops` and run the walk; None when there is no seed."""
    if not seeds:
        return None
    seed_nodes = np.array([node for node, _ in seeds], dtype=np.int64)
    nodes, distance = neighbourhood(
        snapshot, seed_nodes, hops, config.neighbour_cap, config.max_nodes
    )
    graph = local_graph(snapshot, nodes)
    local = {int(node): index for index, node in enumerate(nodes)}
    restart = np.zeros(len(nodes))
    for node, seed in seeds:
        if node in local:
            restart[local[node]] += max(seed.weight, 1e-9)
    scores = personalized_pagerank(
        graph, restart, config.damping, config.max_iterations, config.tolerance
    )
    if config.specificity_weighting:
        # PPR drifts toward hubs; weigh each node's mass by its specificity, as
        # HippoRAG weighs seeds, so "mach number" does not outrank what is specific.
        weighted = scores * specificity(snapshot)[nodes]
        scores = weighted / weighted.sum() if weighted.sum() > 0 else scores
    sources = np.array(sorted(local[node] for node, _ in seeds if node in local), dtype=np.int64)
    cost, parents = best_paths(graph, sources, hops)
    return Walk(snapshot, graph, scores, distance, cost, parents, tuple(seed for _, seed in seeds))


def _strongest(reached: IntArray, mass: FloatArray, positions: IntArray, limit: int) -> IntArray:
    """The `limit` chunk positions among `positions` with most walk mass (ties: lower first)."""
    if not len(reached):
        return positions[:limit]
    at = np.minimum(np.searchsorted(reached, positions), len(reached) - 1)
    found = np.where(reached[at] == positions, mass[at], 0.0)
    return positions[np.lexsort((positions, -found))][:limit]


def _node_hits(walk: Walk, k: int) -> list[GraphHit]:
    reached, mass = walk.chunk_scores()
    hits: list[GraphHit] = []
    for local in walk.ranked()[:k]:
        chunks = walk.snapshot.entity_chunks.row(int(walk.graph.nodes[local]))[0]
        strongest = _strongest(reached, mass, chunks, _BACKING_CHUNKS)
        keys = tuple(int(key) for key in walk.snapshot.chunk_keys[strongest])
        hits.append(
            GraphHit(
                walk.key(local),
                "node",
                float(walk.scores[local]),
                walk.name(local),
                walk.lineage(local),
                keys,
            )
        )
    return hits


def _triplet_hits(walk: Walk, k: int) -> list[GraphHit]:
    half = len(walk.graph.src) // 2  # the first half holds each undirected edge once
    src, dst, weight = walk.graph.src[:half], walk.graph.dst[:half], walk.graph.weight[:half]
    score = np.sqrt(walk.scores[src] * walk.scores[dst])
    if len(score) > 4 * k:  # only the strongest few need a full, tie-broken sort
        keep = np.argpartition(-score, 4 * k)[: 4 * k]
        src, dst, weight, score = src[keep], dst[keep], weight[keep], score[keep]
    hits: list[GraphHit] = []
    for edge in np.lexsort((dst, src, -weight, -score))[:k]:
        a, b = int(src[edge]), int(dst[edge])
        if walk.cost[b] < walk.cost[a]:
            a, b = b, a  # the endpoint nearer the seeds first
        path = path_to(walk.parents, a) if math.isfinite(walk.cost[a]) else [a]
        path = [*path, b] if b not in path else path
        keys = tuple(walk.key(node) for node in path)
        hits.append(
            GraphHit(
                f"{walk.key(a)}|{RELATION}|{walk.key(b)}",
                "triplet",
                float(score[edge]),
                f"{walk.name(a)} {RELATION} {walk.name(b)}",
                Lineage((walk.key(a), walk.key(b)), walk.edges_along(path), keys),
                walk.co_mentions(a, b),
                RELATION,
            )
        )
    return hits


def _path_hits(walk: Walk, k: int) -> list[GraphHit]:
    hits: list[GraphHit] = []
    seen: set[tuple[int, ...]] = set()
    for local in walk.ranked():
        if len(hits) >= k:
            break
        if not math.isfinite(walk.cost[local]) or walk.hops[local] == 0:
            continue
        path = tuple(path_to(walk.parents, int(local)))
        if path in seen:
            continue
        seen.add(path)
        keys = tuple(walk.key(node) for node in path)
        chunks = dict.fromkeys(
            c for a, b in itertools.pairwise(path) for c in walk.co_mentions(a, b)[:1]
        )
        hits.append(
            GraphHit(
                ">".join(keys),
                "path",
                float(walk.scores[local]),
                " → ".join(walk.name(node) for node in path),
                Lineage(keys, walk.edges_along(path), keys),
                tuple(chunks),
            )
        )
    return hits


def _subgraph_hits(walk: Walk, k: int) -> list[GraphHit]:
    top = walk.ranked()[: max(k, 1)]
    edges = walk.induced_edges(top, 4 * max(k, 1))
    keys = tuple(walk.key(int(node)) for node in top)
    names = {walk.key(int(n)): walk.name(int(n)) for n in top}
    reached, mass = walk.chunk_scores()
    _, index = walk.snapshot.entity_chunks.gather(walk.graph.nodes[top])
    backing = np.unique(walk.snapshot.entity_chunks.columns[index])
    strongest = _strongest(reached, mass, backing, max(k, 1))
    chunk_keys = tuple(int(key) for key in walk.snapshot.chunk_keys[strongest])
    seeds = "+".join(seed.id for seed in walk.seeds)
    relations = [f"{names[e.src]} {RELATION} {names[e.dst]}" for e in edges]
    text = "; ".join([", ".join(names[key] for key in keys), *relations])
    score = float(walk.scores[top].sum())
    return [
        GraphHit(f"subgraph:{seeds}", "subgraph", score, text, Lineage(keys, edges), chunk_keys)
    ]


def _chunk_hits(walk: Walk, k: int) -> list[GraphHit]:
    reached, mass = walk.chunk_scores()
    local = {int(node): index for index, node in enumerate(walk.graph.nodes)}
    hits: list[GraphHit] = []
    for at in np.lexsort((reached, -mass))[:k]:
        position = int(reached[at])
        nodes = [
            local[int(n)] for n in walk.snapshot.chunk_entities.row(position)[0] if int(n) in local
        ]
        nodes.sort(key=lambda n: (-walk.scores[n], walk.key(n)))
        lineage = walk.lineage(nodes[0])
        shown = tuple(walk.key(n) for n in nodes[:_CHUNK_NODES])
        hits.append(
            GraphHit(
                walk.snapshot.chunk_ids[position],
                "chunk",
                float(mass[at]),
                ", ".join(walk.name(n) for n in nodes[:_CHUNK_NODES]),
                Lineage(tuple(dict.fromkeys([*lineage.path, *shown])), lineage.edges, lineage.path),
                (int(walk.snapshot.chunk_keys[position]),),
            )
        )
    return hits


#: Result builders by §7.7.2 unit.
UNIT_BUILDERS: Final[dict[Unit, Callable[[Walk, int], list[GraphHit]]]] = {
    "node": _node_hits,
    "triplet": _triplet_hits,
    "path": _path_hits,
    "subgraph": _subgraph_hits,
    "chunk": _chunk_hits,
}


def local_search(walk: Walk | None, k: int, unit: Unit) -> LocalResult:
    """The top `k` results at `unit` of a finished walk (none without seeds)."""
    if unit not in UNIT_BUILDERS:
        raise ValueError(f"unit must be one of {sorted(UNIT_BUILDERS)}")
    if walk is None or k <= 0:
        return LocalResult((), () if walk is None else walk.seeds)
    return LocalResult(tuple(UNIT_BUILDERS[unit](walk, k)), walk.seeds)
