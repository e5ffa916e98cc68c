"""The query index: what every read of an index ranks with, whichever backend holds the rows.

Issue 28: the embedded SQLite store and the PostgreSQL store each wired up the
same in-memory mirror and each ran the same lexical search, filter masks and
dense masks over it — the same logic twice. It lives here once:

* ``_mirror`` follows a backend's committed rows (a :class:`Source`: the rows
  added and retired since the version it holds), so every version any process
  commits is read on every arm (§7.7.1);
* ``_postings`` is BM25 over them with an exact pruning top-k (``bm25``: the
  formula and its parameters), ``_columns`` the §8 filter columns;
* ``dense`` the vector matrix with its ANN graph (``_ann``, ``_usearch``);
* ``_mirror_cache`` keeps all of it beside the index so a new process maps it
  back instead of rebuilding.

A backend (``rcpkit.engine.store.sqlite``, ``rcpkit.engine.store.postgres``)
keeps the durable rows and their writes, and gives the index a :class:`Source`
and a :class:`Reader`: which snapshot a read on this thread sees (the embedded
store pins one per request) and, for a version the mirror no longer holds, the
backend's own answer (PostgreSQL computes it in SQL). Nothing here imports a
backend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter
from rcpkit.engine.index._columns import Mask
from rcpkit.engine.index._mirror import Cache, Mirror, Snapshot, Source
from rcpkit.engine.index._postings import Piece, frequencies, top_k
from rcpkit.engine.index.dense import DenseIndex, DensePolicy, LocalDenseSearch
from rcpkit.engine.scoring.bm25 import BM25, query_tokens, query_weights

__all__ = [
    "Fallback",
    "Index",
    "LearnedSparse",
    "QueryIndex",
    "Reader",
    "SnapshotRead",
    "Snapshot",
    "Source",
    "SparseQuery",
]

Keys = npt.NDArray[np.int64]
Ranked = list[tuple[int, float]]  # (chunk key, score), best first


@dataclass(frozen=True, slots=True)
class SnapshotRead:
    """What one read sees: a mirror snapshot and the version it reads (None: the snapshot's).

    ``snapshot`` None: the mirror does not hold ``version`` (below its floor, or not
    followed yet); the backend's :class:`Fallback` answers instead.
    """

    snapshot: Snapshot | None
    version: int | None


#: The read a thread makes at ``version`` (None: the latest committed one).
Reader = Callable[[Mirror, int | None], SnapshotRead]


class Fallback(Protocol):
    """A backend's own answer for a version its mirror does not hold."""

    def lexical_sql(
        self,
        terms: Sequence[str],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked: ...

    def filtered_keys_sql(
        self, filter: Filter, version: int | None = None, tenant: str | None = None
    ) -> Keys: ...


@dataclass(frozen=True, slots=True)
class SparseQuery:
    """One learned-sparse (SPLADE) recall: the query's term ids and weights, and its scope."""

    terms: tuple[int, ...]
    weights: tuple[float, ...]
    limit: int
    filter: Filter | None
    version: int | None  # None: the latest committed version
    tenant: str | None


class LearnedSparse(Protocol):
    """A backend's SPLADE search (its term weights are not mirrored): its SQL, nothing else.

    Higher is better: the dot product of the query's and the chunk's term weights,
    over the chunks ``tenant`` sees at ``version`` that pass ``filter``, best first
    and ties by the smaller key.
    """

    def learned_sparse_sql(self, query: SparseQuery) -> Ranked: ...


class Index(Protocol):
    """What a read ranks with (``Store.index``): a :class:`QueryIndex` or a Solr collection."""

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
        *,
        floor: float = 0.0,
    ) -> Ranked: ...

    def lexical_of(
        self,
        terms: Sequence[str],
        keys: Sequence[int],
        version: int | None = None,
        tenant: str | None = None,
    ) -> dict[int, float] | None: ...

    def rows_holding(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> Keys: ...

    def learned_sparse(
        self,
        terms: Sequence[int],
        weights: Sequence[float],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked: ...

    def lexical_statistics(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> tuple[int, float, dict[str, int]]: ...

    def filtered_keys(
        self, filter: Filter, version: int | None = None, tenant: str | None = None
    ) -> Keys: ...


def _postings_count(pieces: list[Piece]) -> int:
    return sum(len(positions) for positions, _ in pieces)


def latest(mirror: Mirror, version: int | None) -> SnapshotRead:
    """The plain read: the mirror brought up to the last commit, at ``version``."""
    return SnapshotRead(mirror.sync(), version)


class QueryIndex:
    """Lexical search, filter masks and dense search over one backend's committed rows."""

    def __init__(
        self,
        source: Source,
        cache: Cache | None,
        bm25: BM25,
        *,
        reader: Reader = latest,
        fallback: Fallback | None = None,
        learned_sparse: LearnedSparse | None = None,
    ) -> None:
        self.bm25 = bm25
        self.mirror = Mirror(source, cache, bm25)
        self._reader = reader
        self._fallback = fallback
        self._learned_sparse = learned_sparse

    def _read(self, version: int | None) -> SnapshotRead:
        reading = self._reader(self.mirror, version)
        if reading.snapshot is None and self._fallback is None:
            raise RuntimeError("the mirror does not hold the version read, and nothing else does")
        return reading

    def sync(self) -> Snapshot:
        """The snapshot of the last committed version (followed from the backend if it moved)."""
        return self.mirror.sync()

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
        floor: float = 0.0,
    ) -> Ranked:
        """BM25 over title and body at ``version`` (None: latest); higher is better.

        ``terms``: the analysed query with its repeats (a term's weight grows with its count,
        ``query_weights``). The formula and parameters are ``bm25``'s (FTS5's weighted-column bm25
        with this index's k1, b and weights), over the statistics of the rows
        ``tenant`` sees at ``version`` (§7.7.1, §15.6); ranked by the pruning
        top-k of ``_postings``. ``filter`` (§8) narrows the rows ranked, never the statistics.
        ``floor``: a lower bound the caller knows on the ``limit``-th best score (0:
        none), which the top k prunes with; the SQL fallback ranks without it.
        """
        weights = query_weights(terms)
        if not weights or limit <= 0:
            return []
        reading = self._read(version)
        snapshot = reading.snapshot
        if snapshot is None:
            assert self._fallback is not None
            return self._fallback.lexical_sql(terms, limit, filter, reading.version, tenant)
        view = snapshot.view(tenant, reading.version)
        if filter is not None:
            view = replace(view, allowed=snapshot.columns.mask(filter, snapshot.size))
        return top_k(snapshot.postings, weights, limit, view, floor)

    def lexical_of(
        self,
        terms: Sequence[str],
        keys: Sequence[int],
        version: int | None = None,
        tenant: str | None = None,
    ) -> dict[int, float] | None:
        """`lexical`'s scores of exactly the rows ``keys`` (0 where no term matches).

        The same BM25 (statistics of the rows ``tenant`` sees at ``version``) as the
        first stage, for a candidate list to be scored as `retrieve` scored it (the
        hybrid rerank). None when the mirror does not hold ``version``.
        """
        reading = self._read(version)
        snapshot = reading.snapshot
        if snapshot is None:
            return None
        scores = dict.fromkeys(keys, 0.0)
        weights = query_weights(terms)
        wanted = np.asarray(list(scores), dtype=np.int64)
        positions = np.searchsorted(snapshot.keys, wanted)
        inside = positions < snapshot.size
        inside[inside] = snapshot.keys[positions[inside]] == wanted[inside]
        if not weights or not inside.any():
            return scores
        allowed = np.zeros(snapshot.size, dtype=np.bool_)
        allowed[positions[inside]] = True
        view = replace(snapshot.view(tenant, reading.version), allowed=allowed)
        scores.update(top_k(snapshot.postings, weights, int(inside.sum()), view))
        return scores

    def rows_holding(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> Keys:
        """Keys of the rows ``tenant`` sees at ``version`` holding ``tokens``' rarest one.

        A short list to look a passage's text up among (the hybrid `rerank` of this
        index's own hits); empty when a token is in no row or the version is not held.
        """
        snapshot = self._read(version).snapshot
        if snapshot is None or not tokens:
            return np.zeros(0, dtype=np.int64)
        rarest: list[Piece] | None = None
        for token in dict.fromkeys(query_tokens(tokens)):
            pieces = snapshot.postings.pieces(token, snapshot.size)
            if not pieces:
                return np.zeros(0, dtype=np.int64)
            if rarest is None or _postings_count(pieces) < _postings_count(rarest):
                rarest = pieces
        if rarest is None:
            return np.zeros(0, dtype=np.int64)
        positions = np.concatenate([positions for positions, _ in rarest])
        visible = snapshot.view(tenant, version).visible
        if visible is not None:
            positions = positions[visible[positions]]
        found: Keys = snapshot.keys[positions]
        return found

    def learned_sparse(
        self,
        terms: Sequence[int],
        weights: Sequence[float],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked:
        """SPLADE recall (§3.1: learned sparse joins the sparse arm); higher is better.

        The index holds no SPLADE postings: the backend's SQL ranks (its
        :class:`LearnedSparse`), at the version this thread reads (§7.7.1).
        """
        if not terms or limit <= 0:
            return []
        if self._learned_sparse is None:
            raise RuntimeError("this backend stores no learned-sparse weights")
        if len(terms) != len(weights):
            raise ValueError("one weight per term")
        query = SparseQuery(
            tuple(int(term) for term in terms),
            tuple(float(weight) for weight in weights),
            limit,
            filter,
            version,
            tenant,
        )
        return self._learned_sparse.learned_sparse_sql(query)

    def lexical_statistics(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> tuple[int, float, dict[str, int]]:
        """BM25's corpus statistics as `lexical` reads them: ``N``, ``avgdl``, ``n`` per token.

        For scoring passages that are not rows (the hybrid `rerank`,
        ``rcpkit.engine.rerank._hybrid``) with this index's idf and length norm.
        """
        snapshot = self._read(version).snapshot or self.mirror.sync()
        view = snapshot.view(tenant, version)
        average = view.total_length / view.documents if view.documents else 0.0
        return view.documents, average, frequencies(snapshot.postings, tokens, view)

    def filtered_keys(
        self, filter: Filter, version: int | None = None, tenant: str | None = None
    ) -> Keys:
        """Keys of the chunks ``tenant`` sees at ``version`` whose metadata passes ``filter``."""
        reading = self._read(version)
        snapshot = reading.snapshot
        if snapshot is None:
            assert self._fallback is not None
            return self._fallback.filtered_keys_sql(filter, reading.version, tenant)
        mask = snapshot.columns.mask(filter, snapshot.size) & snapshot.mask(tenant, reading.version)
        return snapshot.keys[mask]

    def open_dense(
        self,
        dimension: int,
        policy: DensePolicy | None,
        graph: Path | None,
        identity: str,
        latest: Callable[[], int],
    ) -> LocalDenseSearch:
        """The process-local dense index over the mirrored vectors, kept current with them.

        ``graph``: where the ANN graph is saved (None: never); ``identity`` names the
        rows it belongs to, so a re-created index never reads another's graph.
        """
        index = DenseIndex(dimension, policy, graph, identity)
        self.mirror.attach_dense(index)
        self.mirror.sync()
        return LocalDenseSearch(index, self._dense_allowed, latest)

    def _dense_allowed(self, filter: Filter, version: int | None, tenant: str | None) -> Mask:
        snapshot = self._read(version).snapshot or self.mirror.snapshot
        return snapshot.columns.mask(filter, snapshot.size)
