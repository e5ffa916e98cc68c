"""The query index's state: an in-memory mirror of a backend's committed rows, kept current.

The backend (the SQLite file, or PostgreSQL) stays the system of record and
feeds the mirror through a :class:`Source` (``store/sqlite/source.py``,
``store/postgres/source.py``); the mirror holds what queries read fast —
the BM25 postings, the §8 filter columns, the dense matrix (through a
:class:`DenseIndex`) and each row's key, tenant and the versions bounding its
visibility. Nothing here is durable, so there is nothing to repair after a
crash: the mirror is rebuilt from the file on open and then follows it.

Following it (issue 14, several writer processes on one file): before a request
resolves its version the store calls :meth:`Mirror.sync`, which reads the
committed version and, when it moved, in ONE read transaction (one WAL
snapshot) the rows added since (keys only grow: commits are serialised by
``BEGIN IMMEDIATE`` and keys are ``AUTOINCREMENT``) and the rows retired since.
So every committed version — whichever process wrote it — is visible on every
arm on the next request, and a pinned version reads exactly its rows: each row
carries ``added``/``removed`` and every arm tests them against the version read.

Readers take the published :class:`Snapshot` (one reference, swapped
atomically) and never lock; the writer appends past the rows a published
snapshot covers, and replaces (never mutates) the arrays it does change.

Opening (issue 15): rebuilding from the file took 12 s at 100k chunks (tokens,
JSON, postings), so the embedded store keeps a cache of this state beside the
file (``_mirror_cache``: a :class:`Frozen` stamped with its version and the
file's identity). A first load takes the cache when it is valid and then
follows the file from the cache's version exactly as a running mirror follows
another process's commits; an invalid one is ignored and the rows are read.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from rcpkit.engine.index._columns import FilterColumns, Mask
from rcpkit.engine.index._growable import Growable
from rcpkit.engine.index._postings import FrozenPostings, LexicalView, Postings, analysed_rows
from rcpkit.engine.index.dense import DenseIndex
from rcpkit.engine.scoring.bm25 import BM25, DEFAULT_BM25

__all__ = ["Cache", "Frozen", "Mirror", "Reading", "Snapshot", "Source"]

_log = logging.getLogger(__name__)
Keys = npt.NDArray[np.int64]
_BATCH = 20_000  # rows read per statement while loading (bounds the tokens held at once)
_VIEWS = 16  # (tenant, version) visibility masks kept per snapshot


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Rows ``[0, len(keys))`` as of ``version``; arrays are never written after publishing."""

    version: int
    floor: int
    keys: Keys
    added: Keys
    removed: Keys  # 0: live
    tenants: npt.NDArray[np.int32]
    lengths: npt.NDArray[np.float64]
    codes: dict[str, int]  # tenant -> code (append-only, shared between snapshots)
    retired: int  # rows with removed != 0
    postings: Postings
    columns: FilterColumns
    _views: dict[tuple[int, int], LexicalView] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.keys)

    def view(self, tenant: str | None, version: int | None) -> LexicalView:
        """Visibility of rows to ``tenant`` at ``version`` (None: this snapshot's version)."""
        at = self.version if version is None else min(version, self.version)
        code = self.codes.get(tenant or "", -1)
        cached = self._views.get((code, at))
        if cached is not None:
            return cached
        visible: Mask | None = None
        if code == -1:
            visible = np.zeros(self.size, dtype=np.bool_)
        elif len(self.codes) > 1:
            visible = self.tenants == code
        if at < self.version:
            live = (self.added <= at) & ((self.removed == 0) | (self.removed > at))
            visible = live if visible is None else visible & live
        elif self.retired:
            live = self.removed == 0
            visible = live if visible is None else visible & live
        documents = self.size if visible is None else int(np.count_nonzero(visible))
        total = float(self.lengths.sum() if visible is None else self.lengths[visible].sum())
        view = LexicalView(self.keys, self.lengths, visible, documents, total, None, {})
        if len(self._views) >= _VIEWS:
            self._views.clear()
        self._views[(code, at)] = view
        return view

    def mask(self, tenant: str | None, version: int | None) -> Mask:
        visible = self.view(tenant, version).visible
        return np.ones(self.size, dtype=np.bool_) if visible is None else visible


@dataclass(frozen=True, slots=True)
class Frozen:
    """Everything a mirror holds at one version, as plain arrays (what its cache stores)."""

    version: int
    floor: int
    keys: Keys
    added: Keys
    removed: Keys
    tenants: npt.NDArray[np.int32]  # codes into ``names``
    lengths: npt.NDArray[np.float64]
    names: list[str]
    postings: FrozenPostings
    columns: dict[str, tuple[npt.NDArray[np.int32], list[object]]]
    # None: the mirror held no vectors. Its first `size` rows are the rows' vectors; a
    # shared one (`_shared_vectors`) has room for appends past them.
    matrix: npt.NDArray[np.float32] | None

    @property
    def size(self) -> int:
        return len(self.keys)


class Cache(Protocol):
    """Where a mirror keeps its state between processes (``_mirror_cache``)."""

    def load(self, reading: Reading, dimension: int | None) -> Frozen | None:
        """A saved state that ``reading``'s record extends (vectors of ``dimension``), or None."""
        ...

    def followed(self, mirror: Mirror, changed: int) -> None:
        """Called (under the mirror's lock) after a follow that changed ``changed`` rows."""
        ...


class Reading(Protocol):
    """One consistent read of the system of record (one snapshot), as the mirror follows it."""

    def marks(self) -> tuple[int, int]:
        """The committed (version, floor)."""
        ...

    def count(self) -> int:
        """Every chunk row, retired or not (sizes a full load)."""
        ...

    def rows(self, after: int, limit: int, vectors: bool) -> list[tuple[Any, ...]]:
        """Chunks with keys above ``after``, by key: (key, tenant, added, removed or 0,
        filter_meta JSON text, analysed title, analysed body, little-endian f4 vector
        bytes or None)."""
        ...

    def vectors(self, last: int) -> Iterator[tuple[int, bytes]]:
        """(key, little-endian f4 vector bytes) of every chunk with a key up to ``last``,
        by key, as the rows are read (a cache's load)."""
        ...

    def retired(self, since: int, last: int) -> list[tuple[int, int]]:
        """(key, removed) of chunks with keys up to ``last`` retired after ``since``."""
        ...

    def live(self, last: int) -> list[int]:
        """Keys up to ``last`` of the chunks not retired."""
        ...


class Source(Protocol):
    """What a mirror follows: the SQLite file, or a PostgreSQL database (``_pg_mirror``)."""

    def marks(self) -> tuple[int, int]:
        """The committed (version, floor), cheaply (read before every request)."""
        ...

    def reading(self) -> contextlib.AbstractContextManager[Reading]:
        """One consistent snapshot to follow the record in."""
        ...


class Mirror:
    """Follows one system of record (a :class:`Source`)."""

    def __init__(
        self, source: Source, cache: Cache | None = None, bm25: BM25 = DEFAULT_BM25
    ) -> None:
        self._source = source
        self._cache = cache
        self.bm25 = bm25
        self._lock = threading.Lock()
        self.dense: DenseIndex | None = None
        self._reset()
        self._snapshot = self._publish(-1, 0)

    def _reset(self) -> None:
        self._keys = Growable(np.int64)
        self._added = Growable(np.int64)
        self._tenants = Growable(np.int32)
        self._lengths = Growable(np.float64)
        self._removed: Keys = np.zeros(0, dtype=np.int64)
        self._codes: dict[str, int] = {}
        self._postings = Postings(self.bm25)
        self._columns = FilterColumns()
        if self.dense is not None:
            self.dense.clear()

    def _publish(self, version: int, floor: int) -> Snapshot:
        self._snapshot = Snapshot(
            version,
            floor,
            self._keys.view(),
            self._added.view(),
            self._removed,
            self._tenants.view(),
            self._lengths.view(),
            self._codes,
            int(np.count_nonzero(self._removed)),
            self._postings,
            self._columns,
        )
        return self._snapshot

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def pinned(self) -> tuple[Snapshot, Any]:
        """The published snapshot and the dense state published with it (None: no vectors)."""
        with self._lock:  # not mid-follow: the two describe the same rows
            return self._snapshot, None if self.dense is None else self.dense.state

    def attach_dense(self, dense: DenseIndex) -> None:
        """Mirror vectors too (loaded from the file: at most once per process)."""
        with self._lock:
            self.dense = dense
            if self._snapshot.size:
                self._reset()
                self._snapshot = self._publish(-1, 0)

    def freeze(self) -> Frozen:
        """The published snapshot's state as plain arrays (for the cache; never mutated).

        Only references are taken under the lock; the postings are flattened after
        it, from arrays no later append changes (rows are appended past them).
        """
        with self._lock:
            snapshot = self._snapshot
            size = snapshot.size
            matrix = self.dense.matrix[:size] if self.dense is not None else None
            names = list(snapshot.codes)
            columns = self._columns.freeze(size)
            postings = self._postings
        return Frozen(
            snapshot.version,
            snapshot.floor,
            snapshot.keys,
            snapshot.added,
            snapshot.removed,
            snapshot.tenants,
            snapshot.lengths,
            names,
            postings.freeze(size, snapshot.lengths),
            columns,
            matrix,
        )

    def _thaw(self, frozen: Frozen) -> None:
        """Hold ``frozen`` as the mirror's state (no copy: the arrays are only appended past)."""
        self._keys = Growable.adopt(frozen.keys)
        self._added = Growable.adopt(frozen.added)
        self._tenants = Growable.adopt(frozen.tenants)
        self._lengths = Growable.adopt(frozen.lengths)
        self._removed = frozen.removed
        self._codes = {name: code for code, name in enumerate(frozen.names)}
        self._postings = Postings.thaw(frozen.postings, self.bm25)
        self._columns = FilterColumns.thaw(frozen.size, frozen.columns)
        if self.dense is not None:
            assert frozen.matrix is not None
            self.dense.adopt(
                frozen.keys,
                frozen.matrix,
                frozen.added,
                frozen.removed,
                frozen.tenants,
                frozen.names,
            )
        self._publish(frozen.version, frozen.floor)

    def sync(self) -> Snapshot:
        """The snapshot of the last committed version (read from the file if it moved)."""
        version, floor = self._source.marks()
        current = self._snapshot
        if version == current.version and floor == current.floor:
            return current
        with self._lock, self._source.reading() as reading:
            version, floor = reading.marks()
            current = self._snapshot
            if version != current.version or floor != current.floor:
                try:
                    self._follow(reading, current, version, floor)
                except BaseException:
                    # Rows of a follow cut short are appended past the published
                    # snapshot: start again from nothing rather than follow from them.
                    self._reset()
                    self._publish(-1, 0)
                    raise
            return self._snapshot

    def _follow(self, reading: Reading, current: Snapshot, version: int, floor: int) -> None:
        if current.version < 0 and self._cache is not None:
            dimension = None if self.dense is None else self.dense.dimension
            frozen = self._cache.load(reading, dimension)
            if frozen is not None:
                self._reset()
                try:
                    self._thaw(frozen)
                    current = self._snapshot
                except ValueError:  # checksums held but the columns do not fit: rebuild
                    _log.warning("the mirror cache does not fit its rows; rebuilding it")
                    self._reset()
                    current = self._publish(-1, 0)
        dead = int(np.count_nonzero((current.removed != 0) & (current.removed <= floor)))
        if current.version < 0 or dead > max(1_000, current.size // 2):
            self._reset()  # first load, or garbage collection left most rows dead
            current = self._publish(-1, 0)
        last = int(current.keys[-1]) if current.size else 0
        changed = 0
        if current.version >= 0:
            changed += self._retire(reading, current.version, last)
            if floor > current.version:  # rows retired since may be collected already
                changed += self._vanished(reading, last, current.version + 1)
        else:  # a full load: size the arrays once instead of doubling them as rows come
            self._reserve(reading.count())
        loaded = 0
        while True:
            rows = reading.rows(last, _BATCH, self.dense is not None)
            if not rows:
                break
            self._append(rows)
            last, loaded = int(rows[-1][0]), loaded + len(rows)
        self._publish(version, floor)
        if loaded > _BATCH:
            _trim()  # the load's token strings are freed: give the heap back to the OS
        if self._cache is not None:
            self._cache.followed(self, changed + loaded)

    def _retire(self, reading: Reading, since: int, last: int) -> int:
        retired = reading.retired(since, last)
        if not retired:
            return 0
        keys = np.array([row[0] for row in retired], dtype=np.int64)
        at = np.array([row[1] for row in retired], dtype=np.int64)
        self._mark(keys, at)
        return len(keys)

    def _vanished(self, reading: Reading, last: int, floor: int) -> int:
        """Rows live here but gone from the record: retired after the version followed, and
        garbage-collected before this follow saw them retire. They are marked retired at
        ``floor``, the version after the one followed: each tenant's floor (§15.6, its own
        retention) is at or past the version that retired them, so no version their
        tenant can still read sees them."""
        keys = self._keys.view()
        live = np.asarray(reading.live(last), dtype=np.int64)
        gone = keys[(self._removed == 0) & ~np.isin(keys, live)]
        if len(gone):
            self._mark(gone, np.full(len(gone), floor, dtype=np.int64))
        return len(gone)

    def _mark(self, keys: Keys, at: Keys) -> None:
        positions = np.searchsorted(self._keys.view(), keys)
        removed = self._removed.copy()
        removed[positions] = at
        if self.dense is not None:
            self.dense.retire(keys, at)
        self._removed = removed

    def _reserve(self, rows: int) -> None:
        for column in (self._keys, self._added, self._tenants, self._lengths):
            column.reserve(rows)
        if self.dense is not None:
            self.dense.reserve(rows)

    def _append(self, rows: list[tuple[object, ...]]) -> None:
        first = len(self._keys)
        keys = np.array([row[0] for row in rows], dtype=np.int64)
        added = np.array([row[2] for row in rows], dtype=np.int64)
        removed = np.array([row[3] for row in rows], dtype=np.int64)
        tenants = [str(row[1]) for row in rows]
        for tenant in dict.fromkeys(tenants):  # new tenants get codes in order of appearance
            self._codes.setdefault(tenant, len(self._codes))
        codes = np.fromiter(map(self._codes.__getitem__, tenants), np.int32, len(tenants))
        frequencies, lengths = analysed_rows([(str(row[5]), str(row[6])) for row in rows])
        if self.dense is not None:
            blob = b"".join(row[7] for row in rows)  # type: ignore[misc]
            matrix = np.frombuffer(blob, dtype="<f4").reshape(len(rows), -1)
            self.dense.extend(keys, matrix, added, removed, tenants)
        self._postings.extend(first, frequencies, lengths)
        # Each distinct filter meta parsed once: a document's chunks share theirs, and
        # documents often have equal ones (the columns only read the mappings).
        texts = [str(row[4]) for row in rows]
        parsed = {text: json.loads(text) for text in dict.fromkeys(texts)}
        self._columns.extend([parsed[text] for text in texts])
        self._keys.extend(keys)
        self._added.extend(added)
        self._tenants.extend(codes)
        self._lengths.extend(lengths)
        self._removed = np.concatenate([self._removed, removed])


def _trim() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
