"""Cached vectors of entity names and community summaries, kept in the graph file.

A vector is computed once per name (a renamed entity loses its vector) and
once per community summary; a change of dimension — another model — drops
them all. The in-memory matrices are aligned with one snapshot / level.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from rcpkit.engine.graph._community_index import CommunityIndex
from rcpkit.engine.graph._snapshot import Snapshot
from rcpkit.engine.graph.storage import GraphStorage
from rcpkit.engine.models import EmbedKind, Vectors

__all__ = ["VectorCache"]

Embed = Callable[[Sequence[str], EmbedKind], Vectors]


class VectorCache:
    """Entity-name and community-summary vectors for one graph, filled on demand."""

    def __init__(self, store: GraphStorage, batch: int) -> None:
        self._store = store
        self._batch = max(batch, 1)
        self._lock = threading.Lock()
        self._entities: tuple[int, Vectors] | None = None
        self._communities: dict[tuple[int, int], Vectors] = {}

    def _fill(
        self,
        ids: Sequence[object],
        texts: Sequence[str],
        stored: dict[object, bytes],
        embed: Embed,
        dimension: int,
        save: Callable[[list[tuple[object, bytes]], int], None],
    ) -> tuple[Vectors, int]:
        matrix = np.zeros((len(ids), dimension), dtype=np.float32)
        missing: list[int] = []
        for row, identifier in enumerate(ids):
            blob = stored.get(identifier)
            if blob is not None and len(blob) == 4 * dimension:
                matrix[row] = np.frombuffer(blob, dtype=np.float32)
            else:
                missing.append(row)
        for start in range(0, len(missing), self._batch):
            rows = missing[start : start + self._batch]
            vectors = np.asarray(embed([texts[r] for r in rows], "document"), dtype=np.float32)
            if vectors.shape != (len(rows), dimension):
                raise ValueError(
                    f"embed returned shape {vectors.shape}, not ({len(rows)}, {dimension})"
                )
            matrix[rows] = vectors
            save([(ids[r], vectors[i].tobytes()) for i, r in enumerate(rows)], dimension)
        return matrix, len(missing)

    def _stored(
        self, query: str, dimension: int, parameters: Sequence[object] = ()
    ) -> dict[object, bytes]:
        if self._store.setting("vectors.dimension") != str(dimension):
            return {}
        return {row[0]: bytes(row[1]) for row in self._store.read(query, parameters)}

    def entities(self, snapshot: Snapshot, embed: Embed, dimension: int | None = None) -> Vectors:
        """One unit row per snapshot node: the vector of its display name."""
        return self._entity_vectors(snapshot, embed, dimension or _dimension(embed))[0]

    def fill_entities(self, snapshot: Snapshot, embed: Embed) -> int:
        """Embed every uncached name now; how many were embedded."""
        return self._entity_vectors(snapshot, embed, _dimension(embed))[1]

    def _entity_vectors(
        self, snapshot: Snapshot, embed: Embed, dimension: int
    ) -> tuple[Vectors, int]:
        with self._lock:
            cached = self._entities
            if (
                cached is not None
                and cached[0] == snapshot.version
                and (cached[1].shape[1] == dimension)
            ):
                return cached[1], 0
            stored = self._stored(
                "SELECT eid, vector FROM entities WHERE vector IS NOT NULL", dimension
            )
            matrix, embedded = self._fill(
                [int(eid) for eid in snapshot.eids],
                snapshot.names,
                stored,
                embed,
                dimension,
                lambda rows, d: self._store.put_entity_vectors(
                    [(int(str(i)), b) for i, b in rows], d
                ),
            )
            self._entities = (snapshot.version, matrix)
            return matrix, embedded

    def communities(
        self, index: CommunityIndex, level: int, embed: Embed, dimension: int | None = None
    ) -> Vectors:
        """One unit row per community at `level` (in `index.at_level` order): title + summary."""
        dimension = dimension or _dimension(embed)
        with self._lock:
            cached = self._communities.get((index.version, level))
            if cached is not None and cached.shape[1] == dimension:
                return cached
            at = index.at_level(level)
            infos = [index.infos[i] for i in at]
            stored = self._stored(
                "SELECT id, vector FROM communities WHERE level = ? AND vector IS NOT NULL",
                dimension,
                (level,),
            )
            matrix, _ = self._fill(
                [info.id for info in infos],
                [f"{info.title}. {info.summary}" for info in infos],
                stored,
                embed,
                dimension,
                lambda rows, d: self._store.put_community_vectors(
                    [(str(i), b) for i, b in rows], d
                ),
            )
            self._communities = {
                (index.version, level): matrix,
                **{
                    key: value
                    for key, value in self._communities.items()
                    if key[0] == index.version
                },
            }
            return matrix


def _dimension(embed: Embed) -> int:
    return int(np.asarray(embed(["dimension probe"], "query")).shape[1])
