"""Each tenant's own version sequence, floor and retention (§7.7.1, §15.6).

The store numbers commits with one global version, shared by every tenant; a
reader pinned to a global version (or holding a cursor of one) would see every
other tenant's write move it, age its pins and cursors by the other tenant's
retention, and learn how busy the other tenants are from the numbers (issue 35).
So a tenant is shown its own sequence instead: its n-th commit is its version
n (its version 0 is its empty corpus), recorded beside the global version the
commit got, and retention keeps each tenant's last ``retain`` versions of its
own. Rows of one tenant are only ever retired by that tenant's commits, so
reading a tenant's version n at the global version of its n-th commit is
exactly that snapshot, whatever other tenants wrote since.

A purge of the tenant (``rcpkit tenants delete``) drops its history but keeps
one row, its floor, at the number after the last one it was shown: the purge
is its empty version, every number shown before it is refused, and a tenant of
that name created again goes on from there, so no number ever names two
different contents (issue 52: a re-created tenant served its old pin "1").

Both backends keep the two tables (``SCHEMA`` in SQLite, migration 0004 in
PostgreSQL) and call :func:`record` in their commit and :func:`collect_floors`
in their garbage collection, inside the same write transaction. The SQL here is
written with ``?`` parameters; :class:`Dialect` turns them into psycopg's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "SCHEMA",
    "Dialect",
    "TenantFloor",
    "TenantVersions",
    "Tenancy",
    "backfill",
    "collect_floors",
    "record",
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS tenant_versions (
    tenant TEXT NOT NULL, seq INTEGER NOT NULL, version INTEGER NOT NULL,
    PRIMARY KEY (tenant, seq)
);
CREATE TABLE IF NOT EXISTS tenant_floors (
    tenant TEXT PRIMARY KEY, seq INTEGER NOT NULL, version INTEGER NOT NULL
);
"""

Rows = Callable[[str, Sequence[object]], list[tuple[Any, ...]]]


@dataclass(frozen=True, slots=True)
class Dialect:
    """How a backend spells a parameter (``?`` in SQLite, ``%s`` in psycopg)."""

    mark: str = "?"

    def sql(self, text: str) -> str:
        return text if self.mark == "?" else text.replace("?", self.mark)

    def run(self, connection: Any, text: str, params: Sequence[object] = ()) -> Any:
        return connection.execute(self.sql(text), tuple(params))


@dataclass(frozen=True, slots=True)
class TenantFloor:
    """A tenant's oldest servable version: its own number and the global one it maps to."""

    tenant: str
    seq: int
    version: int


def record(dialect: Dialect, connection: Any, tenant: str, version: int) -> int:
    """Record a commit of ``tenant`` at global ``version``; returns the tenant's number."""
    seq = latest_seq(dialect, connection, tenant) + 1
    dialect.run(
        connection,
        "INSERT INTO tenant_versions (tenant, seq, version) VALUES (?, ?, ?)",
        (tenant, seq, version),
    )
    return seq


def latest_seq(dialect: Dialect, connection: Any, tenant: str) -> int:
    """The tenant's last version number inside a write transaction (0: never written);
    after a purge, its floor (the purge's number) until it writes again."""
    (latest,) = dialect.run(
        connection,
        "SELECT max(seq) FROM (SELECT coalesce(max(seq), 0) AS seq FROM tenant_versions"
        " WHERE tenant = ? UNION ALL SELECT seq FROM tenant_floors WHERE tenant = ?) AS known",
        (tenant, tenant),
    ).fetchone()
    return int(latest)


def backfill(dialect: Dialect, connection: Any, version: int) -> None:
    """An index written before tenants had versions of their own: every tenant's history
    so far becomes its version 1 (at the current global version), its floor too."""
    if version <= 0:
        return
    (recorded,) = dialect.run(connection, "SELECT count(*) FROM tenant_versions").fetchone()
    if recorded:
        return
    tenants = [
        str(row[0])
        for row in dialect.run(connection, "SELECT DISTINCT tenant FROM documents").fetchall()
    ]
    for tenant in tenants:
        dialect.run(
            connection,
            "INSERT INTO tenant_versions (tenant, seq, version) VALUES (?, 1, ?)",
            (tenant, version),
        )
        dialect.run(
            connection,
            "INSERT INTO tenant_floors (tenant, seq, version) VALUES (?, 1, ?)",
            (tenant, version),
        )


def collect_floors(dialect: Dialect, connection: Any, retain: int) -> list[TenantFloor]:
    """Raise each tenant's floor to keep its last ``retain`` versions; the floors that moved.

    The caller then drops that tenant's rows retired at or below the floor's global
    version: no version the tenant can still pin sees them.
    """
    moved: list[TenantFloor] = []
    rows = dialect.run(
        connection,
        "SELECT v.tenant, max(v.seq), coalesce(max(f.seq), 0) FROM tenant_versions AS v"
        " LEFT JOIN tenant_floors AS f ON f.tenant = v.tenant GROUP BY v.tenant",
    ).fetchall()
    for tenant, latest, floor in rows:
        target = int(latest) - max(1, retain) + 1
        if target <= int(floor) or target <= 0:
            continue
        (version,) = dialect.run(
            connection,
            "SELECT version FROM tenant_versions WHERE tenant = ? AND seq = ?",
            (tenant, target),
        ).fetchone()
        dialect.run(
            connection,
            "INSERT INTO tenant_floors (tenant, seq, version) VALUES (?, ?, ?)"
            " ON CONFLICT (tenant) DO UPDATE SET seq = excluded.seq, version = excluded.version",
            (tenant, target, version),
        )
        dialect.run(
            connection,
            "DELETE FROM tenant_versions WHERE tenant = ? AND seq < ?",
            (tenant, target),
        )
        moved.append(TenantFloor(str(tenant), target, int(version)))
    return moved


def forget(dialect: Dialect, connection: Any, tenant: str) -> None:
    """Drop a tenant's version history (``rcpkit tenants delete``).

    Its floor stays at the number after its last one, mapped to the global version
    of that last commit (its deletion: an empty corpus), so its old numbers are
    refused and its new ones go on from there.
    """
    latest = dialect.run(
        connection,
        "SELECT seq, version FROM tenant_versions WHERE tenant = ? ORDER BY seq DESC LIMIT 1",
        (tenant,),
    ).fetchone()
    for table in ("tenant_versions", "tenant_floors"):
        dialect.run(connection, f"DELETE FROM {table} WHERE tenant = ?", (tenant,))
    if latest is not None:
        dialect.run(
            connection,
            "INSERT INTO tenant_floors (tenant, seq, version) VALUES (?, ?, ?)",
            (tenant, int(latest[0]) + 1, int(latest[1])),
        )


class Tenancy(Protocol):
    """A tenant's versions as a store shows them (``Store.tenancy``)."""

    def latest(self, tenant: str | None) -> int: ...

    def names(self) -> list[str]: ...

    def floor(self, tenant: str | None) -> int: ...

    def global_version(self, tenant: str | None, seq: int) -> int | None: ...


class TenantVersions:
    """A tenant's view of the store's versions, read through ``rows`` (the store's reader:
    inside a snapshot, the snapshot's transaction)."""

    def __init__(self, rows: Rows, dialect: Dialect) -> None:
        self._rows = rows
        self._dialect = dialect

    def _query(self, text: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return self._rows(self._dialect.sql(text), params)

    def latest(self, tenant: str | None) -> int:
        """The tenant's last version number (0: it never wrote; after a purge, the purge's)."""
        found = self._query(
            "SELECT coalesce(max(seq), 0) FROM tenant_versions WHERE tenant = ?", (tenant or "",)
        )
        return max(int(found[0][0]) if found else 0, self.floor(tenant))

    def names(self) -> list[str]:
        """Every tenant with live documents or a version history, by name."""
        found = self._query(
            "SELECT tenant FROM tenant_versions UNION"
            " SELECT tenant FROM documents WHERE removed IS NULL",
            (),
        )
        return sorted({str(row[0]) for row in found})

    def floor(self, tenant: str | None) -> int:
        """The tenant's oldest servable version number."""
        found = self._query("SELECT seq FROM tenant_floors WHERE tenant = ?", (tenant or "",))
        return int(found[0][0]) if found else 0

    def floor_version(self, tenant: str | None) -> int:
        """The global version of the tenant's floor: its rows are exact from there up."""
        found = self._query("SELECT version FROM tenant_floors WHERE tenant = ?", (tenant or "",))
        return int(found[0][0]) if found else 0

    def global_version(self, tenant: str | None, seq: int) -> int | None:
        """The global version that reads the tenant's version ``seq``; None: not servable."""
        if seq < self.floor(tenant) or seq > self.latest(tenant):
            return None
        if seq == 0:
            return 0
        found = self._query(
            "SELECT version FROM tenant_versions WHERE tenant = ? AND seq = ?",
            (tenant or "", seq),
        )
        if found:
            return int(found[0][0])
        # A purged tenant's floor has no commit of its own: it reads the deletion's version.
        return self.floor_version(tenant) if seq == self.floor(tenant) else None
