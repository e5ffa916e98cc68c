"""A sharded store's reads: each shard's index ranked with the whole collection's statistics.

Query-then-fetch with distributed term statistics (the "DFS" phase of
Elasticsearch): a lexical read first sums every shard's ``N``, total length
and ``n`` of each query token at the version it reads, then asks each shard
for its exact top ``k`` under those sums, so every score is the score a single
index over the union gives the row; the union of the shards' top ``k`` holds
the collection's top ``k``. Dense scores are cosines and need no statistics:
the shards' top ``k`` merge the same way. Fusion, feedback, rerank, collapse and
packing then run once, unchanged, over these lists (``engine/retrieve``), so a
sharded answer equals one engine's over the same documents (issue 32).

Keys: a shard's chunk key ``k`` is ``k * MAX_SHARDS + position`` here, so keys
from different shards never collide and each says where its row lives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter
from rcpkit.engine.index import Keys, QueryIndex, Statistics
from rcpkit.engine.index.bm25 import query_tokens
from rcpkit.engine.store.base import CommitResult, DenseSearch
from rcpkit.engine.store.sharded.registry import MAX_SHARDS
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["ShardedDense", "ShardedIndex", "best", "by_shard", "global_key", "local_key"]

Ranked = list[tuple[int, float]]
Matrix = npt.NDArray[np.float32]
T = TypeVar("T")
_NOTHING: Ranked = []  # what a shard left out contributes (never extended in place)


def global_key(key: int, shard: int) -> int:
    return int(key) * MAX_SHARDS + shard


def local_key(key: int) -> tuple[int, int]:
    """(shard position, the shard's own key) of a global key."""
    return int(key) % MAX_SHARDS, int(key) // MAX_SHARDS


def by_shard(keys: Iterable[int]) -> dict[int, list[int]]:
    """The shard's own keys of ``keys``, per shard position."""
    grouped: dict[int, list[int]] = {}
    for key in keys:
        shard, own = local_key(key)
        grouped.setdefault(shard, []).append(own)
    return grouped


def best(ranked: Iterable[tuple[int, float]], limit: int) -> Ranked:
    """The ``limit`` best (key, score): higher first, ties by the smaller key."""
    return sorted(ranked, key=lambda pair: (-pair[1], pair[0]))[:limit]


class Layout(Protocol):
    """What the sharded reads need of the store: the shards' indexes and versions."""

    @property
    def indexes(self) -> Sequence[QueryIndex]: ...

    def at(self, version: int | None) -> tuple[int, ...]:
        """Each shard's version for the collection's ``version`` (None: the latest)."""
        ...

    def read_shard(self, position: int, work: Callable[[], T], empty: T) -> T:
        """``work`` on shard ``position``; ``empty`` if it may be left out and is down."""
        ...

    def read_shards(self, works: Sequence[tuple[int, Callable[[], T]]], empty: T) -> list[T]:
        """Each (position, work) as ``read_shard``, the shards at once; results in order."""
        ...


class ShardedIndex:
    """:class:`~rcpkit.engine.index.Index` over every shard's query index."""

    def __init__(self, layout: Layout) -> None:
        self._layout = layout

    def statistics(
        self, tokens: Sequence[str], versions: Sequence[int], tenant: str | None
    ) -> Statistics:
        """The collection's BM25 statistics: every shard's summed (the DFS phase)."""
        total = Statistics(0, 0.0, dict.fromkeys(tokens, 0))
        left_out: Statistics | None = Statistics(0, 0.0, {})
        works = [
            (position, partial(index.statistics, tokens, version, tenant))
            for position, (index, version) in enumerate(
                zip(self._layout.indexes, versions, strict=True)
            )
        ]
        for found in self._layout.read_shards(works, left_out):
            if found is None:
                raise RCPError(
                    ErrorCode.BACKEND_UNAVAILABLE,
                    "that index version is no longer held in memory; retrieve the latest",
                    retryable=False,
                )
            total = total + found
        return total

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
        *,
        floor: float = 0.0,
    ) -> Ranked:
        tokens = query_tokens(terms)
        if not tokens or limit <= 0:
            return []
        versions = self._layout.at(version)
        statistics = self.statistics(tokens, versions, tenant)
        # Each shard is given the terms with their repeats: its BM25 weighs a term by them.
        ranked: Ranked = []
        # A bound on the union's limit-th best bounds every shard's part of it: a row
        # of the union's top ``limit`` scores at least ``floor`` in its own shard too.
        works = [
            (
                position,
                partial(index.lexical, terms, limit, filter, at, tenant, statistics, floor=floor),
            )
            for position, (index, at) in enumerate(zip(self._layout.indexes, versions, strict=True))
        ]
        for (position, _), found in zip(
            works, self._layout.read_shards(works, _NOTHING), strict=True
        ):
            ranked.extend((global_key(key, position), score) for key, score in found)
        return best(ranked, limit)

    def lexical_of(
        self,
        terms: Sequence[str],
        keys: Sequence[int],
        version: int | None = None,
        tenant: str | None = None,
    ) -> dict[int, float] | None:
        tokens = query_tokens(terms)
        versions = self._layout.at(version)
        statistics = self.statistics(tokens, versions, tenant)
        scores: dict[int, float] = {}
        none: dict[int, float] | None = {}
        indexes = self._layout.indexes
        for position, own in by_shard(keys).items():
            found = self._layout.read_shard(
                position,
                partial(
                    indexes[position].lexical_of,
                    terms,
                    own,
                    versions[position],
                    tenant,
                    statistics,
                ),
                none,
            )
            if found is None:
                return None
            scores.update((global_key(key, position), score) for key, score in found.items())
        return {key: scores.get(key, 0.0) for key in keys}

    def rows_holding(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> Keys:
        return self._keys(version, lambda index, at: index.rows_holding(tokens, at, tenant))

    def learned_sparse(
        self,
        terms: Sequence[int],
        weights: Sequence[float],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked:
        # A dot product of term weights: no collection statistics, so the merge is exact.
        versions = self._layout.at(version)
        ranked: Ranked = []
        for position, (index, at) in enumerate(zip(self._layout.indexes, versions, strict=True)):
            found = self._layout.read_shard(
                position,
                partial(index.learned_sparse, terms, weights, limit, filter, at, tenant),
                _NOTHING,
            )
            ranked.extend((global_key(key, position), score) for key, score in found)
        return best(ranked, limit)

    def lexical_statistics(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> tuple[int, float, dict[str, int]]:
        statistics = self.statistics(query_tokens(tokens), self._layout.at(version), tenant)
        documents = statistics.documents
        average = statistics.total_length / documents if documents else 0.0
        return documents, average, statistics.frequencies

    def filtered_keys(
        self, filter: Filter, version: int | None = None, tenant: str | None = None
    ) -> Keys:
        return self._keys(version, lambda index, at: index.filtered_keys(filter, at, tenant))

    def _keys(self, version: int | None, work: Callable[[QueryIndex, int], Keys]) -> Keys:
        """Every shard's keys ``work`` finds at its version, as global keys."""
        versions = self._layout.at(version)
        empty = np.zeros(0, dtype=np.int64)
        found = [
            self._layout.read_shard(position, partial(work, index, at), empty) * MAX_SHARDS
            + position
            for position, (index, at) in enumerate(zip(self._layout.indexes, versions, strict=True))
        ]
        return np.concatenate(found) if found else empty


class ShardedDense:
    """Dense recall over every shard (cosines need no statistics: the top k merge exactly)."""

    def __init__(self, layout: Layout, shards: Sequence[DenseSearch]) -> None:
        self._layout = layout
        self._shards = list(shards)

    def search(
        self,
        query: Matrix,
        k: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked:
        versions = self._layout.at(version)
        ranked: Ranked = []
        works = [
            (position, partial(dense.search, query, k, filter, at, tenant))
            for position, (dense, at) in enumerate(zip(self._shards, versions, strict=True))
        ]
        for (position, _), found in zip(
            works, self._layout.read_shards(works, _NOTHING), strict=True
        ):
            ranked.extend((global_key(key, position), score) for key, score in found)
        return best(ranked, k)

    def vectors_of(self, keys: Sequence[int]) -> dict[int, Matrix]:
        vectors: dict[int, Matrix] = {}
        none: dict[int, Matrix] = {}
        works = [
            (position, partial(self._shards[position].vectors_of, own))
            for position, own in by_shard(keys).items()
        ]
        for (position, _), found in zip(works, self._layout.read_shards(works, none), strict=True):
            vectors.update((global_key(key, position), vector) for key, vector in found.items())
        return vectors

    def apply(self, result: CommitResult, tenant: str | None) -> None:
        """Nothing to do: each shard searches its vectors in its database."""

    def drop(self, keys: Sequence[int]) -> None:
        """Nothing to do: each shard's garbage collection deleted its rows."""

    def live_count(self, tenant: str | None = None) -> int:
        return sum(
            self._layout.read_shard(position, partial(dense.live_count, tenant), 0)
            for position, dense in enumerate(self._shards)
        )

    def sample(self, limit: int, tenant: str | None = None) -> Matrix:
        """Up to ``limit`` live vectors, an equal part from each shard (calibration)."""
        part = -(-limit // max(1, len(self._shards)))
        none = np.zeros((0, 0), dtype=np.float32)
        found = [
            self._layout.read_shard(position, partial(dense.sample, part, tenant), none)
            for position, dense in enumerate(self._shards)
        ]
        found = [matrix for matrix in found if len(matrix)]
        return np.concatenate(found)[:limit] if found else np.zeros((0, 0), dtype=np.float32)
