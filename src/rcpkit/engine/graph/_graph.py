"""`KnowledgeGraph`: the entity co-occurrence graph of an index, persisted, queried in memory.

Writes (`add_chunks`, `remove_chunks`) extract outside any lock, then commit in
one transaction. Queries run on a snapshot of the current version, rebuilt
on first use after a write; communities are recomputed lazily the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._community_index import (
    CommunityIndex,
    build_communities,
    index_of_rows,
    load_communities,
)
from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._drift import covered_by, followups, fresh_hits
from rcpkit.engine.graph._global import global_search
from rcpkit.engine.graph._local import local_search, walk_from
from rcpkit.engine.graph._results import (
    CommunityPage,
    DriftResult,
    EntityInfo,
    GlobalResult,
    LocalResult,
    NeighborsResult,
    ScoredEntity,
    Seed,
    Unit,
)
from rcpkit.engine.graph._seeds import match_seeds
from rcpkit.engine.graph._snapshot import Snapshot, load_snapshot
from rcpkit.engine.graph._store import GraphStore
from rcpkit.engine.graph._types import Extractor
from rcpkit.engine.graph._vectors import VectorCache
from rcpkit.engine.graph.storage import GraphStorage
from rcpkit.engine.models import EmbedKind, Vectors

__all__ = ["Embed", "KnowledgeGraph"]

#: A batch text encoder such as `Embedder.embed`: unit rows, one per text.
Embed = Callable[[Sequence[str], EmbedKind], Vectors]


class KnowledgeGraph:
    """An entity graph over chunks, stored in the SQLite file at `path`."""

    def __init__(
        self,
        path: Path | str | GraphStorage,
        extractor: Extractor,
        config: GraphConfig | None = None,
    ) -> None:
        self.config = config or GraphConfig()
        self.extractor = extractor
        # A file of its own, or the storage the backend chose (the shared database's).
        self.store: GraphStorage = (
            GraphStore(path, extractor.identity) if isinstance(path, Path | str) else path
        )
        self._snapshot_lock = threading.Lock()
        self._communities_lock = threading.RLock()  # held while partitioning, not by local
        self._snapshot: Snapshot | None = None
        self._communities: CommunityIndex | None = None
        self._vectors = VectorCache(self.store, self.config.embed_batch)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    # --- writes ---

    @property
    def version(self) -> int:
        """Bumped by every write that changed the graph."""
        return self.store.version

    def add_chunks(self, chunks: Sequence[tuple[int, str, str]]) -> int:
        """Extract and add `(chunk key, chunk id, text)` chunks (a key already present is
        replaced), in one transaction; returns the new graph version."""
        latest = list({key: (key, chunk_id, text) for key, chunk_id, text in chunks}.values())
        if not latest:
            return self.version
        extractions = self.extractor.extract([text for _, _, text in latest])
        return self.store.write_chunks(latest, extractions)

    def remove_chunks(self, keys: Sequence[int]) -> int:
        """Remove chunks with their mentions and edge counts; entities left with no mention
        go too. Returns how many of `keys` were present."""
        return self.store.delete_chunks(list(keys))

    # --- state ---

    def snapshot(self) -> Snapshot:
        """The in-memory arrays of the current version."""
        with self._snapshot_lock:
            if self._snapshot is None or self._snapshot.version != self.store.version:
                self._snapshot = load_snapshot(self.store, self.config)
            return self._snapshot

    @property
    def communities_stale(self) -> bool:
        """True when a write happened since communities were last computed."""
        return self.store.communities_version != self.store.version

    def recompute_communities(self) -> int:
        """Partition and summarise now; returns the number of communities computed.

        A read-only server (a standby, issue 20) cannot store them: it keeps them in
        memory for this graph version, and reads the primary's once those are
        stored for the version it serves.
        """
        with self._communities_lock:
            snapshot = self.snapshot()
            rows = build_communities(snapshot, self.store, self.config)
            if self.store.read_only:
                self._communities = index_of_rows(rows, snapshot)
            else:
                self.store.save_communities(rows, snapshot.version)
                self._communities = load_communities(self.store, snapshot)
            return len(rows)

    def _community_index(self) -> tuple[Snapshot, CommunityIndex]:
        with self._communities_lock:
            snapshot = self.snapshot()
            held = self._communities is not None and self._communities.version == snapshot.version
            if self.store.communities_version == snapshot.version:
                if not held:
                    self._communities = load_communities(self.store, snapshot)
            elif not held:
                self.recompute_communities()
            assert self._communities is not None
            return snapshot, self._communities

    def entities(self, ids: Sequence[str]) -> list[EntityInfo]:
        """The known entities among `ids`, in the given order."""
        snapshot = self.snapshot()
        nodes = [snapshot.index_of[i] for i in ids if i in snapshot.index_of]
        return [
            EntityInfo(
                snapshot.keys[n],
                snapshot.names[n],
                snapshot.labels[n],
                int(snapshot.mention_counts[n]),
            )
            for n in nodes
        ]

    def mentions(self, entity_id: str) -> list[tuple[int, int, int, int]]:
        """`(chunk key, sentence index, start, end)` of every mention of an entity."""
        return [
            tuple(row)
            for row in self.store.read(
                'SELECT m.chunk_key, m.sentence, m.start, m."end" FROM mentions m'
                " JOIN entities e ON e.eid = m.eid WHERE e.key = ? ORDER BY 1, 2, 3",
                (entity_id,),
            )
        ]

    def embed_entities(self, embed: Embed) -> int:
        """Embed and cache every entity name not cached yet; returns how many were embedded."""
        return self._vectors.fill_entities(self.snapshot(), embed)

    # --- queries ---

    def _check(self, k: int, hops: int) -> int:
        if not 0 <= hops <= self.config.max_hops:  # §15.5: bounded hops
            raise ValueError(f"hops must be between 0 and {self.config.max_hops}")
        return max(0, min(k, self.config.max_k))

    def _seeds(
        self, snapshot: Snapshot, queries: Sequence[str], embed: Embed | None
    ) -> list[list[tuple[int, Seed]]]:
        if embed is None or not queries:
            return [match_seeds(snapshot, q, self.config) for q in queries]
        query_vectors = embed(list(queries), "query")
        names = self._vectors.entities(snapshot, embed, int(query_vectors.shape[1]))
        return [
            match_seeds(snapshot, q, self.config, v, names)
            for q, v in zip(queries, query_vectors, strict=True)
        ]

    def local_many(
        self,
        queries: Sequence[str],
        k: int = 10,
        hops: int = 2,
        unit: Unit = "chunk",
        embed: Embed | None = None,
    ) -> list[LocalResult]:
        """`local` for a batch of queries (one embedder call)."""
        k = self._check(k, hops)
        snapshot = self.snapshot()
        return [
            local_search(walk_from(snapshot, seeds, hops, self.config), k, unit)
            for seeds in self._seeds(snapshot, queries, embed)
        ]

    def local(
        self,
        query: str,
        k: int = 10,
        hops: int = 2,
        unit: Unit = "chunk",
        embed: Embed | None = None,
    ) -> LocalResult:
        """Entity-anchored search: seeds from the query, PPR over their `hops` neighbourhood,
        the top `k` results at `unit`."""
        return self.local_many([query], k, hops, unit, embed)[0]

    def global_search_many(
        self, queries: Sequence[str], k: int = 5, level: int = 0, embed: Embed | None = None
    ) -> list[GlobalResult]:
        """`global_search` for a batch of queries."""
        k = self._check(k, 0)
        _snapshot, index = self._community_index()
        chosen = min(max(level, 0), max(index.levels - 1, 0))
        dense: list[npt.NDArray[np.float64] | None] = [None] * len(queries)
        if embed is not None and queries and index.at_level(chosen):
            query_vectors = embed(list(queries), "query")
            summaries = self._vectors.communities(index, chosen, embed, query_vectors.shape[1])
            for i, vector in enumerate(query_vectors):
                dense[i] = (summaries @ vector).astype(np.float64)
        return [
            global_search(index, q, k, chosen, self.config, d)
            for q, d in zip(queries, dense, strict=True)
        ]

    def global_search(
        self, query: str, k: int = 5, level: int = 0, embed: Embed | None = None
    ) -> GlobalResult:
        """Community-summary search at `level` (0 the finest): map, then reduce."""
        return self.global_search_many([query], k, level, embed)[0]

    def drift(
        self,
        query: str,
        k: int = 10,
        covered_entity_ids: Sequence[str] = (),
        embed: Embed | None = None,
        hops: int = 2,
        unit: Unit = "chunk",
    ) -> DriftResult:
        """A local search that skips already covered evidence, plus follow-up queries."""
        k = self._check(k, hops)
        snapshot, index = self._community_index()
        seeds = self._seeds(snapshot, [query], embed)[0]
        walk = walk_from(snapshot, seeds, hops, self.config)
        wide = local_search(walk, self.config.max_k, unit)
        before = set(covered_entity_ids)
        hits = fresh_hits(wide.hits, before, k)
        covered = covered_by(walk, hits, before)
        asked = followups(walk, query, covered, index, self.config)
        return DriftResult(hits, tuple(asked), tuple(sorted(covered)), wide.seeds)

    def communities(
        self, level: int | None = None, offset: int = 0, limit: int = 50
    ) -> CommunityPage:
        """One page of communities (all levels when `level` is None), by level then rank."""
        _, index = self._community_index()
        chosen = [info for info in index.infos if level is None or info.level == level]
        offset, limit = max(offset, 0), max(limit, 1)
        page = tuple(chosen[offset : offset + limit])
        more = offset + limit < len(chosen)
        return CommunityPage(page, len(chosen), offset + limit if more else None)

    def neighbors(self, seed_ids: Sequence[str], hops: int = 1, limit: int = 50) -> NeighborsResult:
        """Entities within `hops` of the seeds, scored by PPR from them, with their edges."""
        limit = self._check(limit, hops)
        snapshot = self.snapshot()
        seeds = [
            (snapshot.index_of[i], Seed(i, snapshot.names[snapshot.index_of[i]], 1.0, "exact", 1.0))
            for i in dict.fromkeys(seed_ids)
            if i in snapshot.index_of
        ]
        walk = walk_from(snapshot, seeds, hops, self.config)
        if walk is None or limit == 0:
            return NeighborsResult((), ())
        top = walk.ranked()[:limit]
        nodes = tuple(
            ScoredEntity(
                walk.key(n),
                walk.name(n),
                snapshot.labels[int(walk.graph.nodes[n])],
                float(walk.scores[n]),
                int(walk.hops[n]),
            )
            for n in top
        )
        return NeighborsResult(nodes, walk.induced_edges(top))
