"""A sharded collection's versions: one number per vector of shard versions (§7.7.1, §10).

Every shard numbers its own commits. What a reader pins (``indexVersion``, a
cursor) must name one state of the whole collection, so the catalog (the first
shard's database) numbers the vectors of shard versions it has served:
version ``g`` reads shard ``i`` at ``shards[i]``. Versions of the shards only
grow, so a vector read under the catalog's lock dominates every one recorded
before it: ``g`` increases with every component and every ``g`` is a state that
existed. Work that must be seen whole (a shard move) holds the same lock
(:meth:`VersionCatalog.frozen`), so no reader records a state in its middle.
Cursors and pins keep their plain integer form and stay signed as before
(``retrieve/cursors``): the vector is looked up, never trusted from the client.

A vector is recorded only when every shard's version was read: while a shard is
left out of a read (down, ``store.partial``), its version is not known, and a
vector built with its last recorded one may be a state that never existed (a
move's copy on the missing shard without its delete on the other). Such a read
serves the last version recorded instead, which every reachable shard can still
read (their versions only grew since).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from rcpkit.engine.store.postgres import bound_by_deadline
from rcpkit.engine.store.postgres.errors import psycopg
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["ShardVersions", "VersionCatalog"]

# What the catalog reads of the shards: each one's version, and whether every shard
# answered (False: a shard left out of this read stands at its last recorded version).
ShardVersions = tuple[tuple[int, ...], bool]

_LOCK = "LOCK TABLE shard_versions IN SHARE ROW EXCLUSIVE MODE"

SCHEMA = """
CREATE TABLE IF NOT EXISTS shard_versions (
    version bigint PRIMARY KEY,
    shards bigint[] NOT NULL UNIQUE,
    created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS shard_tenant_numbers (
    tenant text NOT NULL,
    version bigint NOT NULL,
    number bigint NOT NULL,
    PRIMARY KEY (tenant, version)
);
CREATE INDEX IF NOT EXISTS shard_tenant_numbers_by_number
    ON shard_tenant_numbers (tenant, number, version);
CREATE TABLE IF NOT EXISTS shard_tenant_offsets (
    tenant text PRIMARY KEY,
    number bigint NOT NULL
);
"""


class VersionCatalog:
    """Versions of a sharded collection, recorded in the catalog database.

    ``connect``: a new autocommit connection to the catalog. The catalog keeps one
    of its own (not a request's, which may sit in a snapshot that began before
    another server recorded a version); ``read``: the shards' versions, in order.
    """

    def __init__(
        self,
        connect: Callable[[], Any],
        read: Callable[[], ShardVersions],
        *,
        standby: bool = False,
        name: str = "catalog",
    ) -> None:
        """``standby``: the shards are hot standbys (read-only): versions are only looked up.

        ``name``: the catalog shard's, in the errors that say it cannot be reached.
        """
        self._connect_to = connect
        self._name = name
        self._db: Any = None
        self._read = read
        self._standby = standby
        self._lock = threading.RLock()
        self._vectors: dict[int, tuple[int, ...]] = {}
        self._latest: tuple[int, tuple[int, ...]] | None = None
        if not standby:
            with self._connection() as db:
                db.execute(SCHEMA)

    def _connect(self) -> Any:
        with self._reachable():
            return self._connect_to()

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        """The catalog unreachable (refused, lost mid-statement) is -32010 naming its shard."""
        try:
            yield
        except (ValueError, psycopg().OperationalError) as error:
            if isinstance(error, psycopg().errors.QueryCanceled):
                raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True) from None
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                f"shard {self._name}: the catalog of the collection's versions is unavailable",
                retryable=True,
                extra={"shard": self._name},
            ) from None

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """The catalog's connection, one user at a time (opened again after a failure)."""
        with self._lock:
            if self._db is None or self._db.closed:
                self._db = self._connect()
            try:
                with self._reachable():
                    yield self._db
            except BaseException as error:
                if not isinstance(error, RCPError) or error.code == ErrorCode.BACKEND_UNAVAILABLE:
                    self._db.close()  # lost, or in a state not known; else it is fine
                    self._db = None
                raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def latest(self) -> int:
        """The version of the shards' state now (recorded if new).

        On standbys: the newest version recorded (by a server on the primaries; the
        table replicates) that every standby has replayed, so it reads exactly the
        state it names even while some standby lags.
        """
        vector, whole = self._read()
        known = self._latest
        if known is not None and known[1] == vector:
            return known[0]
        if self._standby:
            return self._replayed(vector)
        if not whole:
            return self._last_recorded()
        return self._record()

    def _last_recorded(self) -> int:
        """The newest version recorded, for a read that left a shard out (the module's note)."""
        with self._connection() as db:
            row = db.execute(
                "SELECT version, shards FROM shard_versions ORDER BY version DESC LIMIT 1"
            ).fetchone()
        if row is None:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                "a shard is unreachable and the collection has no recorded version yet",
                retryable=True,
            )
        version = int(row[0])
        self._vectors[version] = tuple(int(v) for v in row[1])
        return version

    def _replayed(self, vector: tuple[int, ...]) -> int:
        with self._connection() as db:
            row = db.execute(
                "SELECT version, shards FROM shard_versions WHERE "
                + " AND ".join(f"coalesce(shards[{i + 1}], 0) <= %s" for i in range(len(vector)))
                + " ORDER BY version DESC LIMIT 1",
                list(vector),
            ).fetchone()
        if row is None:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                "the standbys have replayed no version a primary server recorded yet",
                retryable=True,
            )
        version, found = int(row[0]), _padded(tuple(int(v) for v in row[1]), len(vector))
        self._vectors[version] = found
        return version

    def _record(self) -> int:
        with self._connection() as db, db.transaction():
            bound_by_deadline(db)  # §13.1: waiting for a move's lock counts against the deadline
            db.execute(_LOCK)
            # Read under the lock: a state that a shard move or a write during one is in
            # the middle of is never recorded (they hold the lock throughout, `frozen`),
            # and this vector dominates every one recorded before it.
            vector, whole = self._read()
            row = db.execute(
                "SELECT version, shards FROM shard_versions ORDER BY version DESC LIMIT 1"
            ).fetchone()
            last = (int(row[0]), tuple(int(v) for v in row[1])) if row else None
            if not whole:  # a shard went away since `latest` read them all
                if last is None:
                    raise RCPError(
                        ErrorCode.BACKEND_UNAVAILABLE,
                        "a shard is unreachable and the collection has no recorded version yet",
                        retryable=True,
                    )
                self._vectors[last[0]] = last[1]
                return last[0]
            if last is not None and _padded(last[1], len(vector)) == vector:
                version = last[0]
            else:
                if last is not None and not _dominates(vector, last[1]):
                    raise RCPError(
                        ErrorCode.BACKEND_UNAVAILABLE,
                        f"the shards' versions {list(vector)} are behind the recorded "
                        f"{list(last[1])}: a shard was restored or removed from the registry",
                        retryable=False,
                    )
                version = 0 if last is None else last[0] + 1
                db.execute(
                    "INSERT INTO shard_versions (version, shards) VALUES (%s, %s)",
                    (version, list(vector)),
                )
        self._vectors[version] = vector
        if self._latest is None or version >= self._latest[0]:
            self._latest = (version, vector)
        return version

    def last(self, shards: int) -> tuple[int, ...]:
        """The shard versions last recorded (zeros before the first)."""
        if self._latest is not None:
            return _padded(self._latest[1], shards)
        with self._connection() as db:
            row = db.execute(
                "SELECT shards FROM shard_versions ORDER BY version DESC LIMIT 1"
            ).fetchone()
        return _padded(tuple(int(v) for v in row[0]) if row else (), shards)

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """Until exit no server records a new version: readers keep the last one.

        For work that commits on several shards and must be seen whole or not at all
        (a move: the copy on one shard, the delete on another). It must not ask for
        the latest version inside (that waits for this lock).
        """
        # A connection of its own: waiting readers queue for the table lock in
        # PostgreSQL, which grants it in turn, and get in between two such steps.
        # Only the lock's own statements are the catalog's: an error of the work inside
        # is the work's (a shard's), never reported as the catalog being down.
        with self._connect() as db:
            with self._reachable():
                db.execute("BEGIN")
                bound_by_deadline(db)
                db.execute(_LOCK)
            try:
                yield
            except BaseException:
                with suppress(Exception):  # the work's error is the one to report
                    db.execute("ROLLBACK")
                raise
            with self._reachable():
                db.execute("COMMIT")  # nothing was written here: it only lets go

    # --- a tenant's numbers (``tenancy``), kept here so every server shows the same ---

    def tenant_number(self, tenant: str, version: int) -> int | None:
        """The tenant's number for ``version``, if a server computed it before."""
        return self._integer(
            "SELECT number FROM shard_tenant_numbers WHERE tenant = %s AND version = %s",
            (tenant, version),
        )

    def tenant_version(self, tenant: str, number: int) -> int | None:
        """The oldest version known to read the tenant's ``number``."""
        return self._integer(
            "SELECT min(version) FROM shard_tenant_numbers WHERE tenant = %s AND number = %s",
            (tenant, number),
        )

    def tenant_number_before(self, tenant: str, version: int) -> int | None:
        """The tenant's number recorded last at or before ``version``."""
        return self._integer(
            "SELECT number FROM shard_tenant_numbers WHERE tenant = %s AND version <= %s"
            " ORDER BY version DESC LIMIT 1",
            (tenant, version),
        )

    def _integer(self, query: str, params: tuple[object, ...]) -> int | None:
        """The first column of the first row, if any and not NULL."""
        with self._connection() as db:
            row = db.execute(query, params).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def remember_tenant_number(self, tenant: str, version: int, number: int) -> None:
        if self._standby:  # the primaries' servers write these; the table replicates
            return
        with self._connection() as db:
            db.execute(
                "INSERT INTO shard_tenant_numbers (tenant, version, number) VALUES (%s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                (tenant, version, number),
            )

    def tenant_offset(self, tenant: str) -> int:
        """What the tenant's numbers start from (its last number before a purge; else 0)."""
        return (
            self._integer("SELECT number FROM shard_tenant_offsets WHERE tenant = %s", (tenant,))
            or 0
        )

    def forget_tenant(self, tenant: str, offset: int) -> None:
        """A purged tenant: its numbers go on from ``offset``, never shown again."""
        with self._connection() as db, db.transaction():
            db.execute("DELETE FROM shard_tenant_numbers WHERE tenant = %s", (tenant,))
            db.execute(
                "INSERT INTO shard_tenant_offsets (tenant, number) VALUES (%s, %s)"
                " ON CONFLICT (tenant) DO UPDATE SET number = excluded.number",
                (tenant, offset),
            )

    def vector(self, version: int, shards: int) -> tuple[int, ...] | None:
        """The shard versions ``version`` reads (padded with 0 for shards added since)."""
        found = self._vectors.get(version)
        if found is None:
            with self._connection() as db:
                row = db.execute(
                    "SELECT shards FROM shard_versions WHERE version = %s", (version,)
                ).fetchone()
            if row is None:
                return None
            found = tuple(int(v) for v in row[0])
            self._vectors[version] = found
        return _padded(found, shards)

    def floor(self, floors: Sequence[int]) -> int:
        """The oldest version every shard can still serve (each at or above its floor)."""
        with self._connection() as db:
            row = db.execute(
                "SELECT min(version) FROM shard_versions WHERE "
                + " AND ".join(f"coalesce(shards[{i + 1}], 0) >= %s" for i in range(len(floors))),
                list(floors),
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else self.latest()


def _padded(vector: tuple[int, ...], size: int) -> tuple[int, ...]:
    return vector + (0,) * (size - len(vector)) if len(vector) < size else vector


def _dominates(vector: tuple[int, ...], other: tuple[int, ...]) -> bool:
    if len(vector) < len(other):
        return False
    other = _padded(other, len(vector))
    return all(mine >= theirs for mine, theirs in zip(vector, other, strict=True))
