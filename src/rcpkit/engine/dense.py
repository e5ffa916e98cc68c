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

__all__ = ["DenseIndex", "DensePolicy"]

Matrix = npt.NDArray[np.float32]
Keys = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class DensePolicy:
    ann_min_size: int = 50_000  # below this, exact search is fast enough and perfect
    ann_min_selectivity: float = 0.2  # a filter keeping less than this goes exact
    oversample: int = 4


class DenseIndex:
    """Unit vectors by integer key; safe for concurrent readers and one writer."""

    def __init__(self, dimension: int, policy: DensePolicy | None = None) -> None:
        self.dimension = dimension
        self.policy = policy or DensePolicy()
        self._lock = threading.Lock()
        self._keys: Keys = np.zeros(0, dtype=np.int64)
        self._matrix: Matrix = np.zeros((0, dimension), dtype=np.float32)
        self._ann: object | None = None  # usearch.index.Index, built lazily

    def __len__(self) -> int:
        return len(self._keys)

    def replace(self, keys: Keys, matrix: Matrix) -> None:
        """Load the whole collection (at start-up, from the store)."""
        with self._lock:
            self._keys = keys.astype(np.int64)
            self._matrix = matrix.reshape(len(keys), self.dimension).astype(np.float32)
            self._ann = None

    def update(self, added: Sequence[tuple[int, Matrix]], removed: Sequence[int]) -> None:
        """Apply a committed write; readers keep the arrays they already hold."""
        with self._lock:
            keys, matrix = self._keys, self._matrix
            if removed:
                keep = ~np.isin(keys, np.asarray(removed, dtype=np.int64))
                keys, matrix = keys[keep], matrix[keep]
            if added:
                new_keys = np.fromiter((key for key, _ in added), dtype=np.int64)
                new_rows = np.stack([vector for _, vector in added]).astype(np.float32)
                keys = np.concatenate([keys, new_keys])
                matrix = np.concatenate([matrix, new_rows])
            self._keys, self._matrix = keys, matrix
            ann = self._ann
        if ann is not None:
            self._update_ann(ann, added, removed)

    def vectors_of(self, keys: Sequence[int]) -> dict[int, Matrix]:
        current_keys, matrix = self._keys, self._matrix
        positions = np.searchsorted(current_keys, keys) if _sorted(current_keys) else None
        out: dict[int, Matrix] = {}
        for i, key in enumerate(keys):
            if positions is not None:
                position = int(positions[i])
                if position < len(current_keys) and current_keys[position] == key:
                    out[key] = matrix[position]
            else:
                hits = np.nonzero(current_keys == key)[0]
                if len(hits):
                    out[key] = matrix[hits[0]]
        return out

    def search(self, query: Matrix, k: int, allowed: Keys | None = None) -> list[tuple[int, float]]:
        """Top ``k`` (key, cosine) for a unit ``query``, restricted to ``allowed`` keys."""
        keys, matrix = self._keys, self._matrix
        if not len(keys) or k <= 0:
            return []
        selectivity = 1.0 if allowed is None else len(allowed) / len(keys)
        if len(keys) >= self.policy.ann_min_size and selectivity >= self.policy.ann_min_selectivity:
            found = self._search_ann(query, k, allowed)
            if found is not None:
                return found
        if allowed is not None:
            mask = np.isin(keys, allowed)
            keys, matrix = keys[mask], matrix[mask]
        return _top_k(keys, matrix @ query, k)

    # --- ANN (usearch) ---

    def _search_ann(
        self, query: Matrix, k: int, allowed: Keys | None
    ) -> list[tuple[int, float]] | None:
        ann = self._ensure_ann()
        if ann is None:
            return None
        want = k if allowed is None else k * self.policy.oversample
        matches = ann.search(query, want)  # type: ignore[attr-defined]
        pairs = [
            (int(key), 1.0 - float(distance))
            for key, distance in zip(matches.keys, matches.distances, strict=True)
        ]
        if allowed is not None:
            allowed_set = set(allowed.tolist())
            pairs = [pair for pair in pairs if pair[0] in allowed_set]
        if len(pairs) < min(k, len(self._keys) if allowed is None else len(allowed)):
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
            index = Index(ndim=self.dimension, metric="cos", dtype="f32")
            if len(self._keys):
                index.add(self._keys, self._matrix)
            self._ann = index
            return index

    @staticmethod
    def _update_ann(
        ann: object, added: Sequence[tuple[int, Matrix]], removed: Sequence[int]
    ) -> None:
        for key in removed:
            ann.remove(key)  # type: ignore[attr-defined]
        if added:
            keys = np.fromiter((key for key, _ in added), dtype=np.int64)
            ann.add(keys, np.stack([vector for _, vector in added]))  # type: ignore[attr-defined]


def _sorted(keys: Keys) -> bool:
    return bool(len(keys) < 2 or np.all(keys[1:] > keys[:-1]))


def _top_k(keys: Keys, scores: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    part = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
    # Deterministic order: score, then smaller key.
    order = part[np.lexsort((keys[part], -scores[part]))]
    return [(int(keys[i]), float(scores[i])) for i in order]
