"""Dense recall: exact (one BLAS matrix-vector product) and approximate (usearch HNSW).

The exact path scores the allowed rows only: every row when most are allowed
(the disallowed scores are then set to -inf, cheaper than copying rows), the
gathered subset when a filter keeps few. So a filter never costs recall and
costs at most the unfiltered search. A scan of most rows reads int8 codes of the
rows and rescores the best in float (``_quantized.py``: exact, 5.25x faster than
the float product at 1M rows: BENCHMARKS.md) once the index is large enough and
onnxruntime is installed. The ANN path
is used only when the
collection is large, the query carries no filter (§8: a filtered search keeps
recall 1.0 at every selectivity, so it is always exact), and the graph's
calibration (``_ann.py``) measured that it reaches the target recall@10 faster
than the exact path on the queries this index received; it over-fetches,
drops rows the caller may not see (other tenants, other versions) by position
and falls back to exact when too few survive.

Concurrency: readers take one immutable :class:`_State` reference (swapped
atomically by the writer) and read nothing else, so a search never mixes two
versions of the arrays.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter
from rcpkit.engine.index._ann import AnnGraph, GraphSettings
from rcpkit.engine.index._blas import single_threaded_blas
from rcpkit.engine.index._growable import Growable
from rcpkit.engine.index._quantized import QuantizedRows, QuantizedView, candidates
from rcpkit.engine.index._usearch import import_usearch_index

__all__ = ["DenseIndex", "DensePolicy", "LocalDenseSearch"]

Matrix = npt.NDArray[np.float32]
Keys = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
_GATHER_BELOW = 0.25  # a filter keeping fewer rows than this share scores a gathered copy


@dataclass(frozen=True, slots=True)
class DensePolicy:
    # Below this, exact search is fast enough and perfect.
    ann_min_size: int = 250_000
    # An unfiltered search whose caller sees less than this share (tenant, version) goes exact.
    ann_min_selectivity: float = 0.5
    oversample: int = 4
    # HNSW build parameters; the search expansion is calibrated (see _ann.py).
    ann_connectivity: int = 32
    ann_expansion_add: int = 128
    ann_target_recall: float = 0.95  # recall@10 the graph must reach against exact search
    ann_max_cost: float = 1.0  # ...at a p50 below this share of the exact p50, else exact
    ann_calibration_queries: int = 32  # recent queries the calibration measures on
    # Exact search through int8 codes and float rescoring (_quantized.py): same hits and
    # cosines as the float product, at a quarter of its bytes read (and 25 % more memory).
    quantized: bool = True
    quantized_min_size: int = 20_000  # below this the float product is as fast
    quantized_pool: int = 8  # rows rescored in float per hit wanted (at least 64)


@dataclass(frozen=True, slots=True)
class _State:
    keys: Keys  # ascending
    matrix: Matrix
    added: Keys
    removed: Keys  # 0: live
    tenants: npt.NDArray[np.int32]
    newest: int  # the largest version in added/removed: a reader at or past it needs no test
    retired: int  # rows with removed != 0
    quantized: QuantizedView | None  # int8 codes of every row, when built

    @property
    def size(self) -> int:
        return len(self.keys)


class DenseIndex:
    """Unit vectors by integer key, with the versions each is visible in (§7.7.1).

    A retired row keeps its vector and gets ``removed = version`` so readers
    pinned to an older version still find it. One writer; any number of readers.
    """

    def __init__(
        self,
        dimension: int,
        policy: DensePolicy | None = None,
        graph_path: Path | None = None,
        identity: str = "",
    ) -> None:
        self.dimension = dimension
        self.policy = policy or DensePolicy()
        self._graph_path, self._identity = graph_path, identity
        self._lock = threading.Lock()
        self._codes: dict[str, int] = {"": 0}
        self._recent: deque[Matrix] = deque(maxlen=max(1, self.policy.ann_calibration_queries))
        self._recent_lock = threading.Lock()
        self._pins = threading.local()  # a thread's pinned state (see `pinned`)
        single_threaded_blas()
        self.clear()

    def clear(self) -> None:
        with self._lock:
            self._keys = Growable(np.int64)
            self._matrix = Growable(np.float32, self.dimension)
            self._added = Growable(np.int64)
            self._tenants = Growable(np.int32)
            self._removed: Keys = np.zeros(0, dtype=np.int64)
            self._newest = 0
            settings = GraphSettings(
                self.policy.ann_connectivity,
                self.policy.ann_expansion_add,
                self.policy.ann_target_recall,
                self.policy.ann_max_cost,
            )
            self._graph = AnnGraph(
                self.dimension, settings, self._graph_path, self._identity, self._lock
            )
            old: QuantizedRows | None = getattr(self, "_quantized", None)
            if old is not None:
                old.close()
            self._quantized = QuantizedRows(
                self.dimension, self.policy.quantized_pool, self._lock, self._publish
            )
            self._publish()

    def _publish(self) -> None:
        self._state = _State(
            self._keys.view(),
            self._matrix.view(),
            self._added.view(),
            self._removed,
            self._tenants.view(),
            self._newest,
            int(np.count_nonzero(self._removed)),
            self._quantized.view,
        )

    def __len__(self) -> int:
        return int(np.count_nonzero(self._state.removed == 0))

    @property
    def state(self) -> _State:
        """The published rows (never written after publishing)."""
        return self._state

    @contextmanager
    def pinned(self, state: _State) -> Iterator[None]:
        """Until exit, this thread's searches read ``state`` (one snapshot, §7.7.1).

        The store pins the state published with the mirror snapshot a request reads,
        so a reload after another process's garbage collection (``clear``) does not
        take rows from under a pinned reader.
        """
        self._pins.state = state
        try:
            yield
        finally:
            self._pins.state = None

    def _read_state(self) -> _State:
        pinned: _State | None = getattr(self._pins, "state", None)
        return self._state if pinned is None else pinned

    def _code(self, tenant: str | None) -> int:
        return self._codes.setdefault(tenant or "", len(self._codes))

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` rows in all (a load that knows its size copies nothing)."""
        with self._lock:
            for column in (self._keys, self._matrix, self._added, self._tenants):
                column.reserve(rows)

    def replace(
        self, keys: Keys, matrix: Matrix, added: Keys, removed: Keys, tenants: Sequence[str]
    ) -> None:
        """Load the whole collection."""
        self.clear()
        self.extend(keys, matrix, added, removed, tenants)

    def extend(
        self, keys: Keys, matrix: Matrix, added: Keys, removed: Keys, tenants: Sequence[str]
    ) -> None:
        """Append rows (keys larger than any held)."""
        if not len(keys):
            return
        rows = np.asarray(matrix, dtype=np.float32).reshape(len(keys), self.dimension)
        with self._lock:
            self._keys.extend(keys)
            self._matrix.extend(rows)
            self._added.extend(added)
            self._tenants.extend(np.array([self._code(t) for t in tenants], dtype=np.int32))
            self._removed = np.concatenate([self._removed, np.asarray(removed, np.int64)])
            self._newest = max(self._newest, int(np.max(added)), int(np.max(removed)))
            self._quantized.extend(rows)
            self._publish()
            self._graph.add(np.asarray(keys, dtype=np.int64), rows)
            if len(self._keys) >= self.policy.ann_min_size and _has_usearch():
                self._graph.start(self._rows)
            self._quantize_soon()

    def adopt(
        self,
        keys: Keys,
        matrix: Matrix,
        added: Keys,
        removed: Keys,
        tenants: npt.NDArray[np.int32],
        names: Sequence[str],
    ) -> None:
        """Hold a loaded collection as it is (``matrix`` may be a read-only memory map).

        ``tenants`` are codes into ``names``. Nothing is copied: the first append
        copies the matrix into memory (``Growable.adopt``).
        """
        self.clear()
        codes = np.array([self._code(name) for name in names], dtype=np.int32)
        with self._lock:
            # A shared matrix has room past the rows (``_shared_vectors``): appends go there.
            self._keys, self._matrix = Growable.adopt(keys), Growable.adopt(matrix, len(keys))
            self._added = Growable.adopt(added)
            self._tenants = Growable.adopt(codes[tenants] if len(tenants) else tenants)
            self._removed = removed
            top = [int(np.max(added)), int(np.max(removed))] if len(keys) else []
            self._newest = max([0, *top])
            self._publish()
            if len(keys) >= self.policy.ann_min_size and _has_usearch():
                self._graph.start(self._rows)
            self._quantize_soon()

    def _quantize_soon(self) -> None:
        """Start (or redo, once doubled) the int8 codes off the request path (under the lock)."""
        size = len(self._keys)
        if self.policy.quantized and size >= self.policy.quantized_min_size:
            self._quantized.start(lambda: self._state.matrix, size)

    def wait_for_quantized(self, timeout: float) -> bool:
        """Wait (bounded) for the int8 codes being built; True once searches use them."""
        return self._quantized.wait(timeout)

    @property
    def matrix(self) -> Matrix:
        """The vectors of every row held, in key order (a view: never written)."""
        return self._state.matrix

    def _rows(self) -> tuple[Keys, Matrix]:
        state = self._state
        return state.keys, state.matrix

    @property
    def ann_graph(self) -> object | None:
        """The usearch graph once built or loaded, calibrated or not (None before)."""
        graph: object | None = self._graph.built
        return graph

    @property
    def ann_calibration(self) -> object | None:
        """The graph's :class:`~rcpkit.engine.index._ann.Calibration` (None before)."""
        calibration: object | None = self._graph.calibration
        return calibration

    def wait_for_ann(self, timeout: float) -> bool:
        """Wait (bounded) for a graph being built and calibrated; True when ANN answers."""
        return self._graph.wait(timeout)

    def wait_for_graph(self, timeout: float) -> bool:
        """Wait (bounded) for a graph being built; True once one is held."""
        return self._graph.wait_built(timeout)

    def retire(self, keys: Keys, versions: Keys) -> None:
        """Rows retired at ``versions`` (still visible to readers pinned before)."""
        with self._lock:
            positions = np.searchsorted(self._keys.view(), keys)
            removed = self._removed.copy()
            removed[positions] = versions
            self._removed = removed
            self._newest = max(self._newest, int(np.max(versions)) if len(versions) else 0)
            self._publish()

    def update(
        self,
        added: Sequence[tuple[int, Matrix]],
        removed: Sequence[int],
        version: int,
        tenant: str | None = None,
    ) -> None:
        """Apply a committed write: new rows and rows retired at ``version``."""
        if removed:
            gone = np.asarray(removed, dtype=np.int64)
            held = np.isin(gone, self._state.keys)
            self.retire(gone[held], np.full(int(held.sum()), version, dtype=np.int64))
        if added:
            keys = np.fromiter((key for key, _ in added), dtype=np.int64)
            matrix = np.stack([vector for _, vector in added])
            zeros = np.zeros(len(keys), dtype=np.int64)
            self.extend(keys, matrix, zeros + version, zeros, [tenant or ""] * len(keys))

    def drop(self, keys: Sequence[int]) -> None:
        """Forget rows for good (garbage-collected): the arrays are rebuilt without them."""
        if not len(keys):
            return
        state = self._state
        keep = ~np.isin(state.keys, np.asarray(keys, dtype=np.int64))
        names = {code: name for name, code in self._codes.items()}
        tenants = [names[int(code)] for code in state.tenants[keep]]
        self.replace(
            state.keys[keep], state.matrix[keep], state.added[keep], state.removed[keep], tenants
        )

    def live_matrix(self, limit: int | None = None, tenant: str | None = None) -> Matrix:
        """The vectors visible at the latest version; at most ``limit``, evenly spread.

        Confidence calibration asks for a few thousand: copying every live vector
        (146 MB at 100k chunks) to sample 4,096 of them cost a second on open.
        ``tenant``: only that tenant's (§15.6: calibration is per tenant).
        """
        state = self._state
        live = np.flatnonzero(self._live_of(state, tenant))
        if limit is not None and len(live) > limit:
            live = live[np.linspace(0, len(live) - 1, limit).astype(np.int64)]
        chosen: Matrix = state.matrix[live]
        return chosen

    def live_of(self, tenant: str | None) -> int:
        """How many vectors ``tenant`` sees at the latest version."""
        return int(np.count_nonzero(self._live_of(self._state, tenant)))

    def _live_of(self, state: _State, tenant: str | None) -> Mask:
        live: Mask = state.removed == 0
        if len(self._codes) > 1:
            live = live & (state.tenants == self._codes.get(tenant or "", -1))
        return live

    def vectors_of(self, keys: Sequence[int]) -> dict[int, Matrix]:
        state = self._read_state()
        positions = np.searchsorted(state.keys, keys)
        out: dict[int, Matrix] = {}
        for key, position in zip(keys, positions, strict=True):
            if position < state.size and state.keys[position] == key:
                out[key] = state.matrix[position]
        return out

    def _visible(self, state: _State, version: int | None, tenant: str | None) -> Mask | None:
        """Rows visible to ``tenant`` at ``version`` (None: latest); None when all are."""
        visible: Mask | None = None
        if len(self._codes) > 1:  # some rows belong to a tenant: scope to the caller's
            visible = state.tenants == self._codes.get(tenant or "", -1)
        if version is not None and version < state.newest:
            live = (state.added <= version) & ((state.removed == 0) | (state.removed > version))
            visible = live if visible is None else visible & live
        elif state.retired:
            live = state.removed == 0
            visible = live if visible is None else visible & live
        return visible

    def search(
        self,
        query: Matrix,
        k: int,
        allowed: Keys | Mask | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> list[tuple[int, float]]:
        """Top ``k`` (key, cosine) visible to ``tenant`` at ``version`` (None: latest).

        ``allowed``: the keys a filter keeps, or a mask over row positions.
        """
        state = self._read_state()
        if not state.size or k <= 0:
            return []
        visible = self._visible(state, version, tenant)
        if allowed is not None:
            mask = _as_mask(allowed, state)
            visible = mask if visible is None else visible & mask
        count = state.size if visible is None else int(np.count_nonzero(visible))
        if count == 0:
            return []
        query = np.ascontiguousarray(query, dtype=np.float32)
        if (
            allowed is None  # §8 filters keep recall 1.0: always exact
            and state.size >= self.policy.ann_min_size
            and count / state.size >= self.policy.ann_min_selectivity
        ):
            found = self._search_ann(state, query, k, visible, count)
            if found is not None:
                return found
        return _exact(state, query, k, visible, count)

    # --- ANN (usearch) ---

    def _search_ann(
        self, state: _State, query: Matrix, k: int, visible: Mask | None, count: int
    ) -> list[tuple[int, float]] | None:
        graph = self._graph.ready
        if graph is None:  # not built, not calibrated, or exact won: exact answers
            with self._recent_lock:  # request threads append concurrently
                self._recent.append(query)
                full = len(self._recent) == self._recent.maxlen
                recent = np.stack(self._recent) if full else None
            if recent is not None:
                self._graph.calibrate_soon(self._rows, recent, self._exact_latest)
            return None
        want = min(state.size, k * self.policy.oversample)
        matches = graph.search(query, want, threads=1)
        keys = np.asarray(matches.keys, dtype=np.int64)
        scores = 1.0 - np.asarray(matches.distances, dtype=np.float64)
        positions = np.minimum(np.searchsorted(state.keys, keys), state.size - 1)
        kept = state.keys[positions] == keys  # rows past this state were added since
        if visible is not None:
            kept &= visible[positions]
        if int(np.count_nonzero(kept)) < min(k, count):
            return None  # too few survived the filter: let the exact path answer
        keys, scores = keys[kept], scores[kept]
        order = np.lexsort((keys, -scores))[:k]
        return [(int(keys[i]), float(scores[i])) for i in order]

    def _exact_latest(self, query: Matrix) -> list[tuple[int, float]]:
        """The exact path of an unfiltered search (what the calibration weighs ANN against)."""
        state = self._state
        return _exact(state, query, 10, None, state.size)


def _has_usearch() -> bool:
    try:
        import_usearch_index()
    except ImportError:
        return False
    return True


def _as_mask(allowed: Keys | Mask, state: _State) -> Mask:
    if allowed.dtype == np.bool_:
        given: Mask = allowed.astype(np.bool_, copy=False)
        if len(given) >= state.size:
            return given[: state.size]
        return np.concatenate([given, np.zeros(state.size - len(given), dtype=np.bool_)])
    mask = np.zeros(state.size, dtype=np.bool_)
    wanted = np.asarray(allowed, dtype=np.int64)
    positions = np.minimum(np.searchsorted(state.keys, wanted), state.size - 1)
    mask[positions[state.keys[positions] == wanted]] = True
    return mask


def _exact(
    state: _State, query: Matrix, k: int, visible: Mask | None, count: int
) -> list[tuple[int, float]]:
    if state.quantized is not None and count >= _GATHER_BELOW * state.size:
        found = candidates(state.quantized, state.matrix, query, k, visible, count)
        if found is not None:
            rows, scores = found
            return _top_k(state.keys[rows], scores, min(k, count))
    if visible is None:
        return _top_k(state.keys, state.matrix @ query, k)
    if count < _GATHER_BELOW * state.size:
        rows = np.flatnonzero(visible)
        return _top_k(state.keys[rows], state.matrix[rows] @ query, k)
    scores = state.matrix @ query
    scores[~visible] = -np.inf
    return _top_k(state.keys, scores, min(k, count))


def _top_k(keys: Keys, scores: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    part = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
    # Deterministic order: score, then smaller key.
    order = part[np.lexsort((keys[part], -scores[part]))]
    return [(int(keys[i]), float(scores[i])) for i in order]


class LocalDenseSearch:
    """:class:`DenseSearch` over the embedded store's process-local :class:`DenseIndex`.

    The store's mirror keeps the index current with every committed version,
    whichever process wrote it; a filter becomes the store's mask over row
    positions, and the exact path scores only those rows, so no recall is lost.
    """

    def __init__(
        self,
        index: DenseIndex,
        allowed: Callable[[Filter, int | None, str | None], Mask],
        latest: Callable[[], int],
    ) -> None:
        self.index = index
        self._allowed = allowed
        self._latest = latest

    def search(
        self,
        query: Matrix,
        k: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> list[tuple[int, float]]:
        # §7.7.1: the version read is fixed first; every row is tested against it.
        version = self._latest() if version is None else version
        allowed = self._allowed(filter, version, tenant) if filter is not None else None
        return self.index.search(query, k, allowed, version, tenant)

    def vectors_of(self, keys: Sequence[int]) -> dict[int, Matrix]:
        return self.index.vectors_of(keys)

    def apply(self, result: object, tenant: str | None) -> None:
        """Nothing to do: the store's mirror already followed the commit."""

    def drop(self, keys: Sequence[int]) -> None:
        """Nothing to do: the mirror compacts collected rows itself."""

    def live_count(self, tenant: str | None = None) -> int:
        return self.index.live_of(tenant)

    def sample(self, limit: int, tenant: str | None = None) -> Matrix:
        return self.index.live_matrix(limit, tenant)
