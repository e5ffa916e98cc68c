"""What graph queries return: plain frozen dataclasses, mapped to wire types by the caller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "LOCAL_UNITS",
    "CommunityInfo",
    "CommunityPage",
    "DriftResult",
    "EdgeRef",
    "EntityInfo",
    "GlobalResult",
    "GraphHit",
    "Lineage",
    "LocalResult",
    "NeighborsResult",
    "ScoredCommunity",
    "ScoredEntity",
    "Seed",
    "Unit",
]

#: §7.7.2 granularities a local search can return.
Unit = Literal["node", "triplet", "path", "subgraph", "chunk"]
LOCAL_UNITS: Final[tuple[Unit, ...]] = ("node", "triplet", "path", "subgraph", "chunk")


@dataclass(frozen=True, slots=True)
class EdgeRef:
    """An undirected co-occurrence edge between two entity ids, with its walk weight."""

    src: str
    dst: str
    weight: float


@dataclass(frozen=True, slots=True)
class Lineage:
    """§7.7.2 provenance: the entities, edges and entity path behind a result."""

    nodes: tuple[str, ...] = ()
    edges: tuple[EdgeRef, ...] = ()
    path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphHit:
    """One local/drift result at a §7.7.2 unit, with the chunk keys that back it."""

    id: str  # entity id, "a|co-occurs|b", "a>b>c", "subgraph:…" or the chunk id
    unit: Unit
    score: float
    text: str
    provenance: Lineage
    chunk_keys: tuple[int, ...] = ()
    relation: str | None = None  # "co-occurs" on triplets


@dataclass(frozen=True, slots=True)
class Seed:
    """An entity the query was anchored on, and how it matched."""

    id: str
    name: str
    weight: float
    match: Literal["exact", "dense"]
    similarity: float


@dataclass(frozen=True, slots=True)
class LocalResult:
    """§7.9 `local`: the hits, and the seeds the query was anchored on."""

    hits: tuple[GraphHit, ...]
    seeds: tuple[Seed, ...]


@dataclass(frozen=True, slots=True)
class EntityInfo:
    """A node: id (its normalised key), display name, type and mention count."""

    id: str
    name: str
    label: str
    mentions: int


@dataclass(frozen=True, slots=True)
class ScoredEntity:
    """§7.9 `neighbors` node: an entity with its walk score and hop distance."""

    id: str
    name: str
    label: str
    score: float
    hops: int  # distance from the nearest seed


@dataclass(frozen=True, slots=True)
class NeighborsResult:
    """§7.9 `neighbors`: scored nodes, and the weighted edges among them."""

    nodes: tuple[ScoredEntity, ...]
    edges: tuple[EdgeRef, ...]


@dataclass(frozen=True, slots=True)
class CommunityInfo:
    """A community at one level: its members, a title and an extractive summary."""

    id: str
    level: int
    title: str
    summary: str
    size: int
    members: tuple[str, ...]  # entity ids, most central first
    parent: str | None = None  # the enclosing community one level up
    chunk_keys: tuple[int, ...] = ()  # chunks the summary sentences come from


@dataclass(frozen=True, slots=True)
class CommunityPage:
    """§7.9 `communities`, one page of them (§10)."""

    communities: tuple[CommunityInfo, ...]
    total: int
    next_offset: int | None  # None: this was the last page (§10)


@dataclass(frozen=True, slots=True)
class ScoredCommunity:
    """A community as ranked by `global`: its score and the two parts of it."""

    community: CommunityInfo
    score: float
    dense: float
    lexical: float


@dataclass(frozen=True, slots=True)
class GlobalResult:
    """§7.9 `global`: ranked communities and one extractive summary across them."""

    summary: str  # the reduce step: top sentences across the chosen communities
    communities: tuple[ScoredCommunity, ...]
    level: int  # the level actually searched


@dataclass(frozen=True, slots=True)
class DriftResult:
    """§7.9 `drift`: new hits, follow-up queries, and the covered entities to thread on."""

    hits: tuple[GraphHit, ...]
    followups: tuple[str, ...]
    covered: tuple[str, ...]  # entity ids covered so far, to pass back next time
    seeds: tuple[Seed, ...]
