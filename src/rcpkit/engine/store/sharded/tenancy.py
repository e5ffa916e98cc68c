"""Each tenant's own version numbers over a sharded collection (§15.6, issue 35).

One database shows a tenant its own sequence (``tenant_versions``): its n-th
commit is its version n, so other tenants' writes move none of its numbers and
its numbers tell nothing of how busy the others are. The collection's versions
(``versions``) are shared by every tenant, so a sharded store derives the
tenant's number from the shards' own sequences instead:

    number(tenant, g) = sum over shards i of the tenant's number on shard i at g[i]

Each shard records a tenant's commits atomically with them, so the sum counts
exactly the tenant's commits (on any shard) that version ``g`` includes: it
grows with ``g`` and changes only when the tenant's own documents do. Every
version with the same sum therefore reads the same documents of the tenant
(its BM25 statistics are its own), and a pinned number reads the oldest such
version, found by bisection since the sum only grows with the version. A batch
that touched two shards moves the number by two; numbers are opaque (§7.7.1)
and only ever grow.

Retention is each tenant's own here too: every shard keeps each tenant's last
versions of its own (``collect_floors``), so a version ``g`` reads the tenant
exactly while every component is at or above the tenant's floor on that shard,
however much other tenants wrote since (their writes raise only their floors).

A purge of the tenant (``rcpkit tenants delete``) empties its sequences on the
shards; its numbers then go on from the last one it was shown
(``shard_tenant_offsets``), so no number is ever shown twice.

The catalog keeps every number a server computed (``shard_tenant_numbers``), so
all servers show the same, a server that never served a version finds its
numbers there, and a pinned number is looked up before it is searched for.
While a shard is down a number cannot be summed; a degraded read then shows the
number recorded last at or before its version (every write records its
tenant's).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rcpkit.engine.store.sharded import ShardedStore

__all__ = ["ShardedTenancy"]

_CACHED = 50_000  # (tenant, version) pairs remembered each way before starting over


class ShardedTenancy:
    """The ``Tenancy`` of a sharded store: a tenant's numbers from its shard sequences."""

    def __init__(self, store: ShardedStore) -> None:
        self._store = store
        self._numbers: dict[tuple[str, int], int] = {}  # (tenant, version) -> its number
        self._versions: dict[tuple[str, int], int] = {}  # (tenant, number) -> a version

    def number(self, tenant: str | None, version: int) -> int:
        """The tenant's number for the collection's ``version``.

        Every shard is asked (its own number at the version's component), a shard
        that cannot be reached failing it with ``-32010`` naming the shard; a number
        this server computed before is remembered, so a read while a shard is down
        still knows the numbers of the versions it served.
        """
        key = (tenant or "", version)
        found = self._numbers.get(key)
        if found is not None:
            return found
        store = self._store
        found = store.versions.tenant_number(key[0], version)
        if found is None:
            found = self._sum(tenant, version)
            if found is None:  # a shard left out of this read: the last number recorded
                return self._recorded_before(key[0], version)
            found += store.versions.tenant_offset(key[0])
            store.versions.remember_tenant_number(key[0], version, found)
        if len(self._numbers) >= _CACHED:
            self._numbers.clear()
            self._versions.clear()
        self._numbers[key] = found
        known = self._versions.get((key[0], found))
        if known is None or version < known:
            self._versions[(key[0], found)] = version
        return found

    def _sum(self, tenant: str | None, version: int) -> int | None:
        """The tenant's sequences summed over the shards at ``version``; None when a
        shard is left out of this read (a retrieve's: ``store.partial``)."""
        store = self._store
        vector = store.at(version)
        works = [
            (position, partial(shard.tenancy.seq_at, tenant, at))
            for position, (shard, at) in enumerate(zip(store.shards, vector, strict=True))
        ]
        counts: list[int | None] = store.read_shards(works, None)
        return None if None in counts else sum(count or 0 for count in counts)

    def _recorded_before(self, tenant: str, version: int) -> int:
        """The tenant's number at ``version`` while a shard cannot be counted.

        Every write records its tenant's number at the version it made, so the number
        recorded last at or before ``version`` is the tenant's there: no write of its
        own came between (another tenant's writes make versions, never its numbers),
        and a tenant with none recorded has written nothing (since a purge).
        """
        versions = self._store.versions
        found = versions.tenant_number_before(tenant, version)
        return versions.tenant_offset(tenant) if found is None else found

    def latest(self, tenant: str | None) -> int:
        self._store.serving(tenant)
        return self.number(tenant, self._store.version)

    def names(self) -> list[str]:
        return sorted({name for shard in self._store.shards for name in shard.tenancy.names()})

    def floors(self, tenant: str | None) -> list[int]:
        """Per shard, the version of the tenant's floor there (0: a shard left out)."""
        store = self._store
        works = [
            (position, partial(shard.tenancy.floor_version, tenant))
            for position, shard in enumerate(store.shards)
        ]
        return store.read_shards(works, 0)

    def floor(self, tenant: str | None) -> int:
        """The tenant's oldest servable number: at the oldest version above its floors."""
        return self.number(tenant, self._store.versions.floor(self.floors(tenant)))

    def global_version(self, tenant: str | None, seq: int) -> int | None:
        """A collection version that reads the tenant's number ``seq``; None: not servable."""
        store = self._store
        store.serving(tenant)
        if seq < store.versions.tenant_offset(tenant or ""):  # shown before a purge
            return None
        found = self._versions.get((tenant or "", seq))
        if found is None:
            found = store.versions.tenant_version(tenant or "", seq)
        if found is None:
            found = self._search(tenant, seq)
        if found is None:
            return None
        vector = store.at(found)
        servable = all(at >= floor for at, floor in zip(vector, self.floors(tenant), strict=True))
        return found if servable else None

    def _search(self, tenant: str | None, seq: int) -> int | None:
        """The oldest version whose number is ``seq``, by bisection over every version.

        Below a tenant's floor on a shard that shard counts 0 (its older rows of the
        tenant are gone), so the sum still only grows; a version found where it does is
        refused by the floors in :meth:`global_version`.
        """
        low, high = 0, self._store.version
        if seq > self.number(tenant, high):
            return None
        while low < high:
            middle = (low + high) // 2
            if self.number(tenant, middle) < seq:
                low = middle + 1
            else:
                high = middle
        return low if self.number(tenant, low) == seq else None

    def forget(self, tenant: str, offset: int) -> None:
        """A purged tenant (``rcpkit tenants delete``): its numbers go on from ``offset``.

        Never from 1 again: another server's caches still map the numbers shown before
        the purge to versions from before it, so a number shown again would read one
        of those. Numbers below ``offset`` are refused; ``offset`` itself reads what the
        purge left (nothing of the tenant), as the version it named before did.
        """
        for cache in (self._numbers, self._versions):
            for key in [key for key in cache if key[0] == tenant]:
                del cache[key]
        self._store.versions.forget_tenant(tenant, offset)
