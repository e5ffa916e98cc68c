"""Dense recall: exact (numpy) and approximate (usearch HNSW), chosen per query.

The exact path scores every allowed vector, so a filter never costs recall.
The ANN path is used only when the collection is large and the query is
unfiltered or the filter keeps most of the collection; it over-fetches, drops
filtered-out keys and falls back to exact when too few survive.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter
from rcpkit.engine.store.base import CommitResult, Store

__all__ = ["DenseIndex", "DensePolicy", "LocalDenseSearch"]

Matrix = npt.NDArray[np.float32]
Keys = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class DensePolicy:
    # Below this, exact search is fast enough (~10 ms at 100k × 384 on 2 cores) and
    # perfect; measured: HNSW with a post-filter lost recall at 100k (0.35 at 50 %).
    ann_min_size: int = 250_000
    ann_min_selectivity: float = 0.2  # a filter keeping less than this goes exact
    oversample: int = 4


class DenseIndex:
    """Unit vectors by integer key, with the versions each is visible in (§7.7.1).

    A retired row keeps its vector and gets ``removed = version`` so readers
    pinned to an older version still find it; ``drop`` forgets it for good
    once garbage collection made every such version unservable. Safe for
    concurrent readers and one writer: writers swap whole arrays.
    """

    def __init__(self, dimension: int, policy: DensePolicy | None = None) -> None:
        self.dimension = dimension
        self.policy = policy or DensePolicy()
        self._lock = threading.Lock()
        self._keys: Keys = np.zeros(0, dtype=np.int64)
        self._matrix: Matrix = np.zeros((0, dimension), dtype=np.float32)
        self._added: Keys = np.zeros(0, dtype=np.int64)
        self._removed: Keys = np.zeros(0, dtype=np.int64)  # 0: live
        self._tenant: Keys = np.zeros(0, dtype=np.int64)  # a code per row, see _codes
        self._codes: dict[str, int] = {"": 0}
        self._ann: object | None = None  # usearch.index.Index, built lazily

    def __len__(self) -> int:
        return int(np.count_nonzero(self._removed == 0))

    def _code(self, tenant: str | None) -> int:
        return self._codes.setdefault(tenant or "", len(self._codes))

    def replace(
        self, keys: Keys, matrix: Matrix, added: Keys, removed: Keys, tenants: Sequence[str]
    ) -> None:
        """Load the whole collection (at start-up, from the store)."""
        with self._lock:
            self._keys = keys.astype(np.int64)
            self._matrix = matrix.reshape(len(keys), self.dimension).astype(np.float32)
            self._added, self._removed = added.astype(np.int64), removed.astype(np.int64)
            self._tenant = np.array([self._code(t) for t in tenants], dtype=np.int64)
            self._ann = None

    def update(
        self,
        added: Sequence[tuple[int, Matrix]],
        removed: Sequence[int],
        version: int,
        tenant: str | None = None,
    ) -> None:
        """Apply a committed write; readers keep the arrays they already hold."""
        with self._lock:
            keys, matrix, tenants = self._keys, self._matrix, self._tenant
            added_at, removed_at = self._added, self._removed.copy()
            if removed:
                removed_at[np.isin(keys, np.asarray(removed, dtype=np.int64))] = version
            if added:
                new_keys = np.fromiter((key for key, _ in added), dtype=np.int64)
                new_rows = np.stack([vector for _, vector in added]).astype(np.float32)
                keys = np.concatenate([keys, new_keys])
                matrix = np.concatenate([matrix, new_rows])
                added_at = np.concatenate([added_at, np.full(len(new_keys), version)])
                removed_at = np.concatenate([removed_at, np.zeros(len(new_keys), np.int64)])
                code = np.full(len(new_keys), self._code(tenant), dtype=np.int64)
                tenants = np.concatenate([tenants, code])
            self._keys, self._matrix, self._tenant = keys, matrix, tenants
            self._added, self._removed = added_at, removed_at
            ann = self._ann
        if ann is not None and added:
            self._add_to_ann(ann, added)

    def drop(self, keys: Sequence[int]) -> None:
        """Forget garbage-collected rows."""
        if not keys:
            return
        with self._lock:
            keep = ~np.isin(self._keys, np.asarray(keys, dtype=np.int64))
            self._keys, self._matrix = self._keys[keep], self._matrix[keep]
            self._added, self._removed = self._added[keep], self._removed[keep]
            self._tenant = self._tenant[keep]
            ann = self._ann
        if ann is not None:
            for key in keys:
                ann.remove(key)  # type: ignore[attr-defined]

    def live_matrix(self) -> Matrix:
        """The vectors visible at the latest version."""
        live: Matrix = self._matrix[self._removed == 0]
        return live

    def vectors_of(self, keys: Sequence[int]) -> dict[int, Matrix]:
        current, matrix = self._keys, self._matrix
        positions = np.searchsorted(current, keys)
        out: dict[int, Matrix] = {}
        for key, position in zip(keys, positions, strict=True):
            if position < len(current) and current[position] == key:
                out[key] = matrix[position]
        return out

    def search(
        self,
        query: Matrix,
        k: int,
        allowed: Keys | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> list[tuple[int, float]]:
        """Top ``k`` (key, cosine) visible to ``tenant`` at ``version`` (None: latest)."""
        keys, matrix, added, removed = self._keys, self._matrix, self._added, self._removed
        if not len(keys) or k <= 0:
            return []
        visible = (
            removed == 0
            if version is None
            else (added <= version) & ((removed == 0) | (removed > version))
        )
        if len(self._codes) > 1:  # some rows belong to a tenant: scope to the caller's
            visible &= self._tenant == self._codes.get(tenant or "", -1)
        if allowed is not None:
            visible &= np.isin(keys, allowed)
        selectivity = np.count_nonzero(visible) / len(keys)
        if len(keys) >= self.policy.ann_min_size and selectivity >= self.policy.ann_min_selectivity:
            found = self._search_ann(query, k, keys[visible])
            if found is not None:
                return found
        # Score every row, then drop the invisible ones: boolean-indexing the matrix
        # would copy it (150 MB at 100k x 384) on every query.
        scores = matrix @ query
        if visible.all():
            return _top_k(keys, scores, k)
        return _top_k(keys[visible], scores[visible], k)

    # --- ANN (usearch) ---

    def _search_ann(self, query: Matrix, k: int, visible: Keys) -> list[tuple[int, float]] | None:
        ann = self._ensure_ann()
        if ann is None:
            return None
        want = min(len(self._keys), k * self.policy.oversample)
        matches = ann.search(query, want)  # type: ignore[attr-defined]
        allowed = set(visible.tolist())
        pairs = [
            (int(key), 1.0 - float(distance))
            for key, distance in zip(matches.keys, matches.distances, strict=True)
            if int(key) in allowed
        ]
        if len(pairs) < min(k, len(visible)):
            return None  # too few survived the filter: let the exact path answer
        pairs.sort(key=lambda pair: (-pair[1], pair[0]))
        return pairs[:k]

    def _ensure_ann(self) -> object | None:
        with self._lock:
            if self._ann is not None:
                return self._ann
            try:
                from usearch.index import Index
            except ImportError:
                return None
            # Higher connectivity and search expansion than usearch's defaults:
            # recall matters more than the last millisecond here.
            index = Index(
                ndim=self.dimension,
                metric="cos",
                dtype="f32",
                connectivity=32,
                expansion_add=128,
                expansion_search=256,
            )
            if len(self._keys):
                index.add(self._keys, self._matrix)
            self._ann = index
            return index

    @staticmethod
    def _add_to_ann(ann: object, added: Sequence[tuple[int, Matrix]]) -> None:
        keys = np.fromiter((key for key, _ in added), dtype=np.int64)
        ann.add(keys, np.stack([vector for _, vector in added]))  # type: ignore[attr-defined]


def _top_k(keys: Keys, scores: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    part = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
    # Deterministic order: score, then smaller key.
    order = part[np.lexsort((keys[part], -scores[part]))]
    return [(int(keys[i]), float(scores[i])) for i in order]


class LocalDenseSearch:
    """:class:`DenseSearch` over a process-local :class:`DenseIndex` (the embedded store).

    The index is loaded from the store's vectors at start-up and kept current by
    the commits this process makes; a filter becomes the set of keys the store
    says pass it, and the exact path scores only those, so no recall is lost.
    """

    def __init__(self, store: Store, index: DenseIndex) -> None:
        self._store = store
        self.index = index
        keys, matrix, added, removed, tenants = store.vectors()
        if len(keys):
            index.replace(keys, matrix, added, removed, tenants)

    def search(
        self,
        query: Matrix,
        k: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> list[tuple[int, float]]:
        if version is not None and version == self._store.version:
            version = None  # the latest: no per-row version test
        allowed = self._store.filtered_keys(filter, version, tenant) if filter else None
        return self.index.search(query, k, allowed, version, tenant)

    def vectors_of(self, keys: Sequence[int]) -> dict[int, Matrix]:
        return self.index.vectors_of(keys)

    def apply(self, result: CommitResult, tenant: str | None) -> None:
        self.index.update(result.added, result.removed, result.version, tenant)

    def drop(self, keys: Sequence[int]) -> None:
        self.index.drop(keys)

    def live_count(self) -> int:
        return len(self.index)

    def sample(self, limit: int) -> Matrix:
        return self.index.live_matrix()
