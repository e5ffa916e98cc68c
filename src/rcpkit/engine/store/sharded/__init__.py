"""A collection spread over several PostgreSQL databases: shards behind one engine (issue 32).

One PostgreSQL primary holds one ``PostgresStore``'s corpus and takes all its
writes. Past that, a shard registry (``registry``) names S databases and this
store spreads the documents over them by a stable hash of (tenant, id): each
commit goes to the shards that hold its documents, each read asks every shard.
The engine above is the one engine (``engine/retrieve``): it sees a ``Store``
whose index ranks with the whole collection's statistics (``reads``) and whose
versions are vectors of the shards' (``versions``), so a sharded answer is a
single engine's over the same documents, scores to float rounding.

What a write through it guarantees (``commit``):

* the part of a batch that goes to one shard commits atomically, as a
  ``PostgresStore`` commit does;
* a batch spanning shards commits shard by shard, in registry order, and is not
  atomic across them: when a shard fails, the parts committed before it stay
  and the error (``-32010`` or the shard's own code) lists in ``error.data``
  the ids ``committed`` and the ids ``failed``. Every shard is asked for its
  version before the first part commits, so a shard already down fails the
  whole batch with nothing committed. A retry of the whole batch is
  safe (upserts by id); with ``_meta.idempotencyKey`` the key is recorded only
  once every part committed, so the retry re-applies the batch.

Reads: every shard is read at the version its component of the collection's
version names; one retrieve names one version throughout (:meth:`snapshot`). A
shard that cannot be reached (or gives no answer within half of what the
request's deadline leaves) is left out of a retrieve, which is answered from the
others at the last recorded version and says so (``_meta.degraded``,
``usage.notes``; ``store.partial``), unless the registry marks shards
``required``: then the retrieve fails with ``-32010`` naming the shard
(``error.data.shard``), as every write and every other read does. The catalog
(the first shard) is always needed.

Growing: append shards to the registry, restart the servers on it, then
``rebalance`` (``rcpkit db shards rebalance``) moves each document the new
layout homes elsewhere, a batch at a time under the catalog's lock, while
reads and writes go on (see :meth:`ShardedStore.rebalance`). From the first
server opened on the grown registry until a rebalance completes, the layout is
unbalanced (the catalog's ``shards.balanced`` names fewer shards): writes then
delete their ids from the shards that hold them away from home, and reads of
one document look past its home. From then on too, a server still on the
shorter registry refuses writes (``-32010``: it would place documents by the
old layout) and no server opens on it (the catalog's ``shards.size``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar, copy_context
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from rcpkit.engine.index import QueryIndex
from rcpkit.engine.store import deadline
from rcpkit.engine.store.base import (
    ChunkRow,
    CommitResult,
    DocumentRow,
    Idempotency,
    Keys,
    WriteBatch,
)
from rcpkit.engine.store.partial import (
    LeftOut,
    PartFigures,
    already_left_out,
    leave_out,
    tolerated,
)
from rcpkit.engine.store.postgres import PostgresStore, connect
from rcpkit.engine.store.sharded.reads import (
    ShardedDense,
    ShardedIndex,
    by_shard,
    global_key,
)
from rcpkit.engine.store.sharded.registry import MAX_SHARDS, Registry, load_registry
from rcpkit.engine.store.sharded.tenancy import ShardedTenancy
from rcpkit.engine.store.sharded.versions import ShardVersions, VersionCatalog
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["ShardedStore", "ShardedTenancy", "load_registry"]

T = TypeVar("T")

# A shard a partial read could not reach is skipped this long before it is tried again.
_DOWN_SECONDS = 5.0
# Reads of several shards run at once (SQL and numpy release the GIL).
_FAN = ThreadPoolExecutor(max_workers=32, thread_name_prefix="rcpkit-shards")

# Catalog setting: how many shards the documents are placed for. Fewer than the
# registry names: it grew and no rebalance completed since (writes clean up strays).
_BALANCED = "shards.balanced"
# Catalog setting: the most shards a server's registry named. A server whose registry
# names fewer (not yet restarted on the grown one) would place writes by the old layout.
_SIZE = "shards.size"
# A tolerant read gives a shard this share of what the request's deadline leaves.
_SHARD_SHARE = 0.5


class ShardedStore:
    """The ``Store`` of a registry of PostgreSQL shards; the first shard is the catalog.

    The catalog holds what the collection has once: settings (the model bound to
    the index, the cursor secret), idempotency keys, the version vectors, the
    engine state and the graphs.
    """

    def __init__(
        self,
        registry: Registry,
        open_shard: Callable[[str, int], PostgresStore],
    ) -> None:
        """``open_shard(url, position)``: the store of one shard."""
        self.registry = registry
        self.shards: list[PostgresStore] = []
        try:
            for position, shard in enumerate(registry.shards):
                self.shards.append(self.on_shard(position, lambda: open_shard(shard.url, position)))  # noqa: B023
        except BaseException:
            self.close()
            raise
        self.catalog = self.shards[0]
        self.bm25 = self.catalog.bm25
        for shard, store in zip(registry.shards[1:], self.shards[1:], strict=True):
            if store.bm25 != self.bm25:
                raise ValueError(
                    f"shard {shard.name} ranks with BM25 {store.bm25}, the catalog with "
                    f"{self.bm25}: every shard of a collection needs the same parameters"
                )
        self.read_only = any(store.read_only for store in self.shards)
        self._down: dict[int, float] = {}  # shard position -> skipped until (monotonic)
        self._left_out = [0] * len(self.shards)  # retrieves answered without each shard
        self._counting = threading.Lock()
        # What one retrieve reads (see `snapshot`); one variable per store.
        self._reading: ContextVar[_Read | None] = ContextVar(
            f"rcpkit_shards_read_{id(self)}", default=None
        )
        catalog_url = registry.shards[0].url
        self.versions = VersionCatalog(
            lambda: connect(catalog_url),
            self._shard_versions,
            standby=self.read_only,
            name=registry.shards[0].name,
        )
        if not self.read_only:  # the first server on a new collection places for its registry
            self.catalog.setting_default(_BALANCED, str(len(self.shards)))
            if int(self.catalog.setting_default(_SIZE, "0")) < len(self.shards):
                self.catalog.set_setting(_SIZE, str(len(self.shards)))
        grown = self._grown_to()
        if grown is not None:
            self.close()
            raise ValueError(self._grown_message(grown))
        self.tenancy = ShardedTenancy(self)
        self.index = ShardedIndex(self)

    # --- the layout the reads use ---

    @property
    def indexes(self) -> Sequence[QueryIndex]:
        return [store.index for store in self.shards]

    def at(self, version: int | None) -> tuple[int, ...]:
        """Each shard's version for the collection's ``version`` (None: the latest)."""
        at = self.version if version is None else version
        vector = self.versions.vector(at, len(self.shards))
        if vector is None:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                f"index version {at} is not available; retrieve without indexVersion",
                retryable=False,
            )
        read = self._reading.get()
        if read is not None:
            read.vectors.add(vector)
        return vector

    def on_shard(self, position: int, work: Callable[[], T]) -> T:
        """``work`` on shard ``position``; an unreachable shard is named in the error."""
        name = self.registry.shards[position].name
        try:
            return work()
        except RCPError as error:
            if error.code != ErrorCode.BACKEND_UNAVAILABLE:
                raise
            extra = {**(error.extra or {}), "shard": name}
            raise RCPError(
                error.code,
                f"shard {name}: {error.message}",
                retryable=error.retryable,
                extra=extra,
            ) from error
        except ValueError as error:  # a shard that refuses the connection at open
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE, f"shard {name}: {error}", retryable=True,
                extra={"shard": name},
            ) from error  # fmt: skip

    def read_shard(self, position: int, work: Callable[[], T], empty: T) -> T:
        """A read of one shard; ``empty`` when it may be left out and cannot be reached.

        It may be left out when the registry does not mark shards required and the
        read is a retrieve's (``store.partial``: the result says which shard was left
        out). A shard left out stays out of the rest of that request; one that could not
        be reached is skipped by every request for ``_DOWN_SECONDS``, and tried again
        after; one that was only slow (no answer within its share of a request's
        deadline) is asked again by the next request.
        """
        tolerant = not self.registry.required and tolerated()
        if not tolerant:
            return self.on_shard(position, work)
        name = self.registry.shards[position].name
        if already_left_out(name):  # this request went on without it: it stays out
            return empty
        if self._down.get(position, 0.0) > time.monotonic():
            self._leave_out(position, LeftOut(name, ErrorCode.BACKEND_UNAVAILABLE, "unreachable"))
            return empty
        # §13.1: a shard that does not answer must not take the whole deadline with it
        # (a down shard holds a read for the pool's wait), so it gets a share of it.
        left = deadline.remaining()
        share = None if left is None else time.monotonic() + max(0.0, left) * _SHARD_SHARE
        try:
            with deadline.deadline_scope(share) if share is not None else nullcontext():
                found = self.on_shard(position, work)
        except RCPError as error:
            own_time_out = error.code == ErrorCode.TIMEOUT and (deadline.remaining() or 0.0) > 0
            if error.code != ErrorCode.BACKEND_UNAVAILABLE and not own_time_out:
                raise
            message = error.message
            if own_time_out:  # slow for this request only: the next one asks it again
                message = "no answer within its share of the request's deadline"
            else:
                self._down[position] = time.monotonic() + _DOWN_SECONDS
            self._leave_out(position, LeftOut(name, error.code, message))
            return empty
        self._down.pop(position, None)
        return found

    def _leave_out(self, position: int, part: LeftOut) -> None:
        """Record ``part`` left out of this retrieve; counted once per retrieve (/metrics)."""
        if leave_out(part):
            with self._counting:
                self._left_out[position] += 1

    def read_shards(self, works: Sequence[tuple[int, Callable[[], T]]], empty: T) -> list[T]:
        """Each (position, work) as :meth:`read_shard`, the shards at once; results in order.

        Each runs in this request's context (its deadline, its partial scope).
        """
        if len(works) <= 1:
            return [self.read_shard(position, work, empty) for position, work in works]
        running = [
            _FAN.submit(copy_context().run, self.read_shard, position, work, empty)
            for position, work in works
        ]
        return [future.result() for future in running]

    def each(self, work: Callable[[PostgresStore], T]) -> list[T]:
        """``work`` on every shard in order, a failure named after its shard."""
        return [
            self.on_shard(position, lambda: work(store))  # noqa: B023
            for position, store in enumerate(self.shards)
        ]

    def _shard_versions(self) -> ShardVersions:
        """Every shard's version, and whether all answered (one left out: its last recorded)."""
        works = [
            (position, partial(getattr, store, "version"))
            for position, store in enumerate(self.shards)
        ]
        found: list[int | None] = self.read_shards(works, None)
        if all(version is not None for version in found):
            return tuple(v for v in found if v is not None), True
        recorded = self.versions.last(len(self.shards))
        return tuple(recorded[n] if v is None else v for n, v in enumerate(found)), False

    def parts(self) -> list[PartFigures]:
        """Each shard's figures now (``/metrics``): reachable, version, live counts."""
        figures = []
        for position, (shard, store) in enumerate(
            zip(self.registry.shards, self.shards, strict=True)
        ):
            try:
                version = store.version
                documents, chunks = _live_counts(store)
            except RCPError:
                figures.append(
                    PartFigures(shard.name, False, None, None, None, self._left_out[position])
                )
                continue
            figures.append(
                PartFigures(shard.name, True, version, documents, chunks, self._left_out[position])
            )
        return figures

    def home(self, tenant: str | None, doc_id: str) -> int:
        return self.registry.home(tenant, doc_id)

    # --- versions ---

    @property
    def version(self) -> int:
        """The collection's latest version; inside :meth:`snapshot`, the one read first."""
        read = self._reading.get()
        if read is not None and read.latest is not None:
            return read.latest
        latest = self.versions.latest()
        if read is not None:
            read.latest = latest
        return latest

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One retrieve's reads as one state of the collection (§7.7.1).

        Until exit the latest version is read once: the number a retrieve shows
        (``indexVersion``, its cursor) is the one every read of it serves, however many
        versions other servers record meanwhile. No database snapshot spans the shards,
        so another server's garbage collection may delete rows of the version being read
        while it is read (one database avoids that in one transaction): on exit the
        tenant's floor on each shard is read again, and a read whose version fell below
        one fails rather than answer from rows half gone.
        """
        if self._reading.get() is not None:
            yield
            return
        read = _Read()
        token = self._reading.set(read)
        try:
            yield
            if read.vectors and read.tenant is not None:
                self._still_servable(read.tenant[0], read.vectors)
        finally:
            self._reading.reset(token)

    def serving(self, tenant: str | None) -> None:
        """Note whose versions this :meth:`snapshot` reads (``tenancy`` calls it)."""
        read = self._reading.get()
        if read is not None:
            read.tenant = (tenant,)

    def _still_servable(self, tenant: str | None, vectors: set[tuple[int, ...]]) -> None:
        floors = self.tenancy.floors(tenant)
        for vector in vectors:
            if any(at < floor for at, floor in zip(vector, floors, strict=True)):
                raise RCPError(
                    ErrorCode.BACKEND_UNAVAILABLE,
                    "the index version this read served was collected while it was read "
                    "(its tenant wrote past snapshot_retention meanwhile); retrieve again",
                    retryable=True,
                )

    @property
    def floor(self) -> int:
        # A shard left out of a retrieve does not bound the versions it may pin.
        floors = [
            self.read_shard(position, partial(getattr, store, "floor"), 0)
            for position, store in enumerate(self.shards)
        ]
        return self.versions.floor(floors)

    def _grown_to(self) -> int | None:
        """The shards the collection has grown to, if more than this registry names."""
        size = int(self.setting(_SIZE) or 0)
        return size if size > len(self.shards) else None

    def _grown_message(self, size: int) -> str:
        return (
            f"the collection has grown to {size} shards and this registry "
            f"names {len(self.shards)}: start the server on the grown registry (its "
            "writes would place documents by the old layout)"
        )

    @property
    def balanced(self) -> bool:
        """Whether every document is placed for this registry (no rebalance pending)."""
        return self.setting(_BALANCED) == str(len(self.shards))

    # --- writes ---

    def commit(self, batch: WriteBatch, idempotency: Idempotency | None = None) -> CommitResult:
        """Each shard's part of ``batch`` as one commit there (see the module's atomicity).

        Until a rebalance has placed every document for this registry (``balanced``),
        a write also deletes its ids from every other shard that still holds them, all
        of it under the catalog's lock, so a read never sees a document twice, a
        deleted one stays deleted and a move never carries an older copy back.
        """
        if idempotency is not None:
            found = self.remembered(idempotency[0])
            if found is not None:
                version = self.version
                shown = self.tenancy.number(batch.tenant, version)
                return CommitResult(version, [], [], 0, found, shown=shown)
        parts: dict[int, WriteBatch] = {}
        for document in batch.documents:
            position = self.home(batch.tenant, document[0].doc_id)
            parts.setdefault(position, WriteBatch(tenant=batch.tenant)).documents.append(document)
        for doc_id in batch.delete:
            position = self.home(batch.tenant, doc_id)
            parts.setdefault(position, WriteBatch(tenant=batch.tenant)).delete.append(doc_id)
        # A write records the collection's new version, which reads every shard: ask them
        # all first, so a shard that is down fails the batch before any part of it commits.
        try:
            self._shard_versions()  # every shard at once; outside a retrieve none is left out
            grown = self._grown_to()
            if grown is not None:  # a rolling restart onto more shards
                message = self._grown_message(grown)
                raise RCPError(ErrorCode.BACKEND_UNAVAILABLE, message, retryable=True)
        except RCPError as error:
            raise _partial(error, [], parts, 0) from error
        # Read before the lock: it only ever turns true at the end of a rebalance, under
        # the lock, after which every document is at home; reading it unbalanced costs
        # only a cleanup that finds nothing.
        moving = not self.balanced
        with self.versions.frozen() if moving else nullcontext():
            if moving:
                for position, strays in self._strays(batch).items():
                    parts.setdefault(position, WriteBatch(tenant=batch.tenant)).delete.extend(
                        doc_id for doc_id in strays if doc_id not in parts[position].delete
                    )
            added: list[tuple[int, npt.NDArray[np.float32]]] = []
            removed: list[int] = []
            deleted = 0
            committed: list[str] = []
            for position in sorted(parts):
                part = parts[position]
                try:
                    result = self.on_shard(position, lambda: self.shards[position].commit(part))  # noqa: B023
                except RCPError as error:
                    raise _partial(error, committed, parts, position) from error
                added.extend((global_key(key, position), vector) for key, vector in result.added)
                removed.extend(global_key(key, position) for key in result.removed)
                deleted += result.deleted_documents
                committed.extend(_ids(part))
        try:
            version = self.version  # after `frozen`: it waits for the lock that holds
            shown = self.tenancy.number(batch.tenant, version)  # §15.6: the tenant's own number
            if idempotency is not None:
                key, render = idempotency
                text = render(shown) if callable(render) else render
                self.catalog.commit(WriteBatch(tenant=batch.tenant), (key, text))
        except RCPError as error:  # a shard went down after every part committed
            raise _partial(error, committed, parts, len(self.shards)) from error
        return CommitResult(version, added, removed, deleted, shown=shown)

    def _strays(self, batch: WriteBatch) -> dict[int, list[str]]:
        """Per shard, the ids of ``batch`` it holds live although their home is elsewhere."""
        ids = [document.doc_id for document, _ in batch.documents] + list(batch.delete)
        strays: dict[int, list[str]] = {}
        for position, store in enumerate(self.shards):
            away = [doc_id for doc_id in ids if self.home(batch.tenant, doc_id) != position]
            held = [doc_id for doc_id in away if store.content_hash(doc_id, batch.tenant)]
            if held:
                strays[position] = held
        return strays

    def rebalance(
        self,
        batch: int = 100,
        report: Callable[[str], None] | None = None,
        moved: Callable[[str | None, list[int], list[int]], None] | None = None,
    ) -> int:
        """Move every document that is not on its home shard there; how many moved.

        After shards were added to the registry (and every server restarted on it).
        Each step moves up to ``batch`` documents of one shard and tenant under the
        catalog's lock: copied to their home as stored (text, chunks, vectors,
        terms; nothing embedded again) unless the home already holds a newer copy
        (a write since), then deleted where they were. Readers keep the version
        from before the step until it ends, so every read sees each document once,
        before or after its move. Stopped anywhere, running it again finishes the
        job; a finished run leaves nothing to move and says so. A move is not its
        tenant's write: its numbers stay (a pin or cursor reads the version from
        before the move, the same documents) and retention counts none of it.

        A moved chunk gets a new key (its home's), so what indexes chunks by key
        must follow: ``moved(tenant, added, removed)`` is called after each step with
        the keys it added and removed, as a commit's are (the engine's graphs).
        """
        count = 0
        for position, source in enumerate(self.shards):
            for tenant in source.tenancy.names():
                scope = tenant or None
                misplaced = [
                    doc_id
                    for doc_id, _, _ in source.live_documents(scope)
                    if self.home(scope, doc_id) != position
                ]
                for start in range(0, len(misplaced), batch):
                    step = misplaced[start : start + batch]
                    added, removed = self._move(position, scope, step)
                    if moved is not None:
                        moved(scope, added, removed)
                    count += len(step)
                if misplaced and report is not None:
                    name = self.registry.shards[position].name
                    report(f"{name}: moved {len(misplaced)} documents of tenant {tenant!r}")
        with self.versions.frozen():
            # Under the lock: a write that read "unbalanced" before this finishes its
            # cleanup first; every one after finds each document at home.
            self.catalog.set_setting(_BALANCED, str(len(self.shards)))
        return count

    def _move(
        self, position: int, tenant: str | None, doc_ids: list[str]
    ) -> tuple[list[int], list[int]]:
        """One step of :meth:`rebalance`; the (global) chunk keys it added and removed."""
        source = self.shards[position]
        added: list[int] = []
        with self.versions.frozen():
            targets: dict[int, list[str]] = {}
            for doc_id in doc_ids:
                targets.setdefault(self.home(tenant, doc_id), []).append(doc_id)
            for target, ids in targets.items():
                store = self.shards[target]
                missing = [doc_id for doc_id in ids if store.content_hash(doc_id, tenant) is None]
                if missing:
                    copies = source.export_documents(missing, tenant)
                    result = store.commit(WriteBatch(documents=copies, tenant=tenant), move=True)
                    added.extend(global_key(key, target) for key, _ in result.added)
            result = source.commit(WriteBatch(delete=doc_ids, tenant=tenant), move=True)
        return added, [global_key(key, position) for key in result.removed]

    def collect(self, retain: int) -> list[int]:
        keys: list[int] = []
        for position, store in enumerate(self.shards):
            keys.extend(global_key(key, position) for key in store.collect(retain))
        return keys

    def forget_idempotency(self, retention_seconds: float) -> int:
        return self.catalog.forget_idempotency(retention_seconds)

    def purge_tenant(
        self, tenant: str, schemas: Sequence[str] = (), *, keep_numbers: bool = True
    ) -> dict[str, int]:
        # The catalog always carries the numbers on (``tenancy``); the shards keep none.
        offset = self.tenancy.number(tenant or None, self.version)  # its numbers go on from here
        counts: dict[str, int] = {}
        for position, store in enumerate(self.shards):
            # The graphs' schemas live in the catalog, with the engine state.
            found = store.purge_tenant(tenant, schemas if position == 0 else (), keep_numbers=False)
            for table, rows in found.items():
                counts[table] = counts.get(table, 0) + rows
        self.tenancy.forget(tenant, offset)
        return counts

    # --- reads ---

    def open_dense(self, dimension: int, policy: Any) -> ShardedDense:
        return ShardedDense(self, [store.open_dense(dimension, policy) for store in self.shards])

    def fetch(self, keys: Sequence[int]) -> dict[int, ChunkRow]:
        rows: dict[int, ChunkRow] = {}
        none: dict[int, ChunkRow] = {}
        works = [
            (position, partial(self.shards[position].fetch, own))
            for position, own in by_shard(keys).items()
        ]
        for (position, _), found in zip(works, self.read_shards(works, none), strict=True):
            for key, row in found.items():
                rows[global_key(key, position)] = replace(row, key=global_key(key, position))
        return rows

    def documents_of(self, keys: Sequence[int]) -> dict[int, DocumentRow]:
        documents: dict[int, DocumentRow] = {}
        none: dict[int, DocumentRow] = {}
        works = [
            (position, partial(self.shards[position].documents_of, own))
            for position, own in by_shard(keys).items()
        ]
        for (position, _), found in zip(works, self.read_shards(works, none), strict=True):
            documents.update((global_key(key, position), row) for key, row in found.items())
        return documents

    def body_terms(self, keys: Sequence[int]) -> dict[int, str]:
        # One shard after another: a PostgreSQL shard answers from memory (it keeps
        # no order of terms), so a fan-out to the pool would only add its hand-offs.
        found: dict[int, str] = {}
        none: dict[int, str] = {}
        for position, own in by_shard(keys).items():
            work = partial(self.shards[position].body_terms, own)
            terms = self.read_shard(position, work, none)
            found.update((global_key(key, position), body) for key, body in terms.items())
        return found

    def vectors(self) -> tuple[Keys, npt.NDArray[np.float32], Keys, Keys, list[str]]:
        parts = [store.vectors() for store in self.shards]
        keys = np.concatenate(
            [part[0] * MAX_SHARDS + position for position, part in enumerate(parts)]
        )
        matrices = [part[1] for part in parts if len(part[1])]
        matrix = np.concatenate(matrices) if matrices else np.zeros((0, 0), dtype=np.float32)
        added = np.concatenate([part[2] for part in parts])
        removed = np.concatenate([part[3] for part in parts])
        tenants = [tenant for part in parts for tenant in part[4]]
        return keys, matrix, added, removed, tenants

    def filter_values(self, keys: Sequence[int], name: str) -> dict[int, Any]:
        values: dict[int, Any] = {}
        none: dict[int, Any] = {}
        works = [
            (position, partial(self.shards[position].filter_values, own, name))
            for position, own in by_shard(keys).items()
        ]
        for (position, _), found in zip(works, self.read_shards(works, none), strict=True):
            values.update((global_key(key, position), value) for key, value in found.items())
        return values

    def live_keys(self, keys: Sequence[int]) -> set[int]:
        """Which of these (global) chunk keys are live now (a graph keeps only those)."""
        live: set[int] = set()
        for position, own in by_shard(keys).items():
            found = self.on_shard(position, lambda: self.shards[position].live_keys(own))  # noqa: B023
            live.update(global_key(key, position) for key in found)
        return live

    def _at_home(
        self, doc_id: str, tenant: str | None, work: Callable[[PostgresStore], T]
    ) -> tuple[int, T]:
        """(position, ``work``) on the shard holding ``doc_id`` of ``tenant``: its home, or,
        while the layout is unbalanced and the home has nothing, the shard that has it."""
        position = self.home(tenant, doc_id)
        found = self.on_shard(position, lambda: work(self.shards[position]))
        if found or self.balanced:
            return position, found
        for other in range(len(self.shards)):
            if other != position:
                elsewhere = self.on_shard(other, lambda: work(self.shards[other]))  # noqa: B023
                if elsewhere:
                    return other, elsewhere
        return position, found

    def content_hash(self, doc_id: str, tenant: str | None = None) -> str | None:
        return self._at_home(doc_id, tenant, lambda store: store.content_hash(doc_id, tenant))[1]

    def live_documents(self, tenant: str | None = None) -> list[tuple[str, str | None, str]]:
        return sorted(row for rows in self.each(lambda s: s.live_documents(tenant)) for row in rows)

    def document(self, doc_id: str, tenant: str | None = None) -> DocumentRow | None:
        return self._at_home(doc_id, tenant, lambda store: store.document(doc_id, tenant))[1]

    def document_chunks(self, doc_id: str, tenant: str | None = None) -> list[ChunkRow]:
        position, rows = self._at_home(
            doc_id, tenant, lambda store: store.document_chunks(doc_id, tenant)
        )
        return [replace(row, key=global_key(row.key, position)) for row in rows]

    def describe(self) -> dict[str, Any]:
        sizes = [store.describe()["size_bytes"] for store in self.shards]
        live = {tenant for tenant in self.tenancy.names() if self.count(tenant)[0]}
        return {"tenants": len(live), "size_bytes": sum(size or 0 for size in sizes)}

    def remembered(self, idempotency_key: str) -> str | None:
        return self.on_shard(0, lambda: self.catalog.remembered(idempotency_key))

    def vocabulary(self, tenant: str | None = None) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for store in self.shards:
            for word, df in store.vocabulary(tenant):
                counts[word] = counts.get(word, 0) + df
        return list(counts.items())

    def live_texts(self, limit: int, tenant: str | None = None) -> list[str]:
        texts: list[str] = []
        for store in self.shards:
            texts.extend(store.live_texts(limit - len(texts), tenant))
            if len(texts) >= limit:
                break
        return texts

    def document_frequency(self, word: str, tenant: str | None = None) -> int:
        return sum(self.each(lambda store: store.document_frequency(word, tenant)))

    def setting(self, name: str) -> str | None:
        return self.on_shard(0, lambda: self.catalog.setting(name))

    def set_setting(self, name: str, value: str) -> None:
        self.on_shard(0, lambda: self.catalog.set_setting(name, value))

    def setting_default(self, name: str, value: str) -> str:
        return self.on_shard(0, lambda: self.catalog.setting_default(name, value))

    def count(self, tenant: str | None = None) -> tuple[int, int]:
        counts = self.each(lambda store: store.count(tenant))
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    def close(self) -> None:
        versions = getattr(self, "versions", None)
        if versions is not None:
            versions.close()
        for store in self.shards:
            store.close()


@dataclass
class _Read:
    """What one retrieve has read so far (:meth:`ShardedStore.snapshot`)."""

    latest: int | None = None  # the latest version, read once
    tenant: tuple[str | None] | None = None  # whose versions (None: not known yet)
    vectors: set[tuple[int, ...]] = field(default_factory=set)  # the shard versions read


def _ids(part: WriteBatch) -> list[str]:
    return [document.doc_id for document, _ in part.documents] + list(part.delete)


def _partial(
    error: RCPError, committed: list[str], parts: dict[int, WriteBatch], failed_at: int
) -> RCPError:
    """The error of a batch a shard failed: which ids were committed, which were not."""
    failed = [doc_id for position in sorted(parts) if position >= failed_at
              for doc_id in _ids(parts[position])]  # fmt: skip
    extra = {**(error.extra or {}), "committed": committed, "failed": failed}
    message = error.message
    if committed:
        message += f" ({len(committed)} of the batch's documents were committed)"
    return RCPError(error.code, message, retryable=error.retryable, extra=extra)


def _live_counts(store: PostgresStore) -> tuple[int, int]:
    """Live documents and chunks of every tenant of one shard."""
    documents = chunks = 0
    for tenant in store.tenancy.names():
        counted = store.count(tenant or None)
        documents += counted[0]
        chunks += counted[1]
    return documents, chunks
